"""Speed of activation patching on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.patching_perf [--model smollm2|FOLDER] [--threads N] [--repeats N]

The IOI pair (the second John → Mary, target " Mary", foil " John"), the model loaded once:
  1. attribution patching, every cell of every grid from two forward passes and one backward pass (≤ 1 s);
  2. the exact residual-stream grid, (layers + 1) × positions patched runs (≤ 10 s);
  3. the exact heads grid, layers × heads patched runs (≤ 10 s);
  4. the time to the first filled-in layer of the residual grid (≤ 1 s);
  5. in the panel (unless --no-panel): a new pair typed → the first cells of the residual grid on
     screen (≤ 1 s), the longest UI stall during the sweep (≤ 50 ms), and Cancel → the sweep's
     task ended (≤ 0.5 s).
The load average and thread count are printed: on a shared machine the numbers move with them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

from tests.perf.timing import wall_times_ms

CLEAN = "When Mary and John went to the store, John gave a drink to"
CORRUPT = "When Mary and John went to the store, Mary gave a drink to"


def median_s(action, repeats: int) -> tuple[float, float]:
    """(median, min) wall time of ``action()`` in seconds over ``repeats`` calls, after one warm-up."""
    times = wall_times_ms(action, repeats)
    return statistics.median(times) / 1000, min(times) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each sweep")
    parser.add_argument("--no-panel", action="store_true", help="skip the panel measurements")
    args = parser.parse_args()

    import torch

    from core import models
    from core.interp.attribution import attribute
    from core.interp.patching import WHATS, patch, prepare

    if args.threads:
        torch.set_num_threads(args.threads)
    model = models.load_model(args.model, expect=models.DECODER)
    pair = prepare(model, CLEAN, CORRUPT, " Mary", " John")
    shape = model.module.config
    print(
        f"{model.name}: {pair.length} tokens, {shape.num_hidden_layers} layers × "
        f"{shape.num_attention_heads} heads; torch threads {torch.get_num_threads()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )

    def every_cell():
        approx = attribute(model, pair)
        for what in WHATS:
            approx.grid(what, head=(0, 0))

    med, low = median_s(every_cell, args.repeats)
    print(f"attribution, every cell of every grid: median {med:.2f} s (best {low:.2f} s; target ≤ 1 s)")
    for what in ("resid", "heads"):
        grid = patch(model, pair, what)
        med, low = median_s(lambda what=what: patch(model, pair, what), args.repeats)
        print(
            f"exact {what} grid, {grid.raw.size} patched runs: median {med:.2f} s (best {low:.2f} s; "
            "target ≤ 10 s)"
        )

    class First(Exception):
        pass

    def first_layer():
        def stop(grid):
            raise First

        with contextlib.suppress(First):
            patch(model, pair, "resid", partial=stop)

    med, low = median_s(first_layer, args.repeats)
    print(f"first row of the residual grid: median {med:.2f} s (best {low:.2f} s; target ≤ 1 s)")
    if not args.no_panel:
        in_the_panel(args.model)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def in_the_panel(source: str) -> None:
    """First cells, UI stalls and Cancel in the Patching panel, the residual grid's step on screen."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app import worker
    from app.panels.patching import PatchingPanel

    panel = PatchingPanel()
    panel.resize(1280, 720)
    panel.show()
    panel.use_model(source)
    worker.wait_idle(600)
    panel.set_step(1)
    worker.wait_idle(600)
    gaps, last = [], [time.perf_counter()]

    def beat():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(beat)
    timer.start(5)
    firsts, cancels = [], []
    for k, place in enumerate(("park", "market", "beach")):  # a new pair each time: a new sweep
        wanted = CORRUPT.replace("store", place)
        start = time.perf_counter()
        panel.runs.apply(clean=CLEAN.replace("store", place), corrupt=wanted)
        while not new_cells(panel, wanted) and time.perf_counter() - start < 60:
            app.processEvents()
            time.sleep(0.002)
        firsts.append(time.perf_counter() - start)
        if k < 2:
            worker.wait_idle(600)
            continue
        panel.stream.cancel_button.click()
        start = time.perf_counter()
        worker.wait_idle(60)
        cancels.append(time.perf_counter() - start)
    timer.stop()
    print(
        f"panel: first cells {statistics.median(firsts):.2f} s after a new pair (median of 3; target ≤ 1 s); "
        f"longest UI stall {max(gaps) * 1000:.0f} ms (target ≤ 50 ms); Cancel → task ended "
        f"{cancels[0]:.2f} s (target ≤ 0.5 s)"
    )
    worker.cancel_all()


def new_cells(panel, corrupt: str) -> bool:
    """The residual grid on screen has cells of the pair with this corrupted prompt."""
    r = panel.runs.result
    grid = None if r is None else r.grids.get("resid")
    fresh = grid is not None and r is not None and abs(grid.corrupt - r.corrupt) < 1e-3
    return fresh and r.state.corrupt == corrupt


if __name__ == "__main__":
    main()
