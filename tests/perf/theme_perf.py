"""Theme switch with every panel built: time from the View → Theme action to the window
repainted (the palette applied, every plot restyled, the pending repaints done).

    python -m tests.perf.theme_perf [--switches N] [--profile]

Every panel is built and shown once first (models load as when a user visits them). Then, with
each panel on screen in turn, the window switches between light and dark ``--switches`` times;
it prints the median, p95 and median CPU time (steadier on a busy machine) over all switches,
and the panel with the slowest median. Target: ≤ 300 ms. ``--profile`` prints where the time
goes (cProfile, cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=6, help="switches timed per panel (default 6)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the switches")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    from app import settings, worker
    from app.window import MainWindow

    settings.use_folder(tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    window = MainWindow()
    window.resize(1500, 900)
    window.show()
    keys = window.keys()  # the panels' keys, in the navigation's order
    for key in keys:  # every panel built, shown once and settled
        window.show_panel(key)
        worker.wait_idle(600)
        app.processEvents()
    actions = {action.data(): action for action in window.theme_actions.actions()}
    print(f"{len(window.panels)} panels built, {len(keys)} in the list")

    def switch(k: int) -> None:
        actions["dark" if k % 2 == 0 else "light"].trigger()
        app.processEvents()  # delivers the pending update requests: the window repaints

    wall, cpu, slowest = [], [], (0.0, "")
    profile = cProfile.Profile() if args.profile else None
    for key in keys:
        window.show_panel(key)
        switch(1)  # settle on light first, so every timed switch changes the palette
        mine = []
        for k in range(args.switches):
            start, start_cpu = time.perf_counter(), time.process_time()
            if profile:
                profile.enable()
            switch(k)
            if profile:
                profile.disable()
            mine.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
        wall += mine
        slowest = max(slowest, (statistics.median(mine), key))
    wall.sort()
    print(
        f"theme switch, all panels built -> window repainted: median {statistics.median(wall):.0f} ms, "
        f"p95 {wall[int(0.95 * (len(wall) - 1))]:.0f} ms, CPU median {statistics.median(cpu):.0f} ms "
        f"({args.switches} switches with each panel on screen, light and dark in turn); "
        f"slowest: {slowest[1]}, median {slowest[0]:.0f} ms"
    )
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
