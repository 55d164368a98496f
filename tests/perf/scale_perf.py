"""Repaint time of the "Scale and temperature" panel while a slider is dragged.

Run from the project root:  python -m tests.perf.scale_perf

For each slider, every drag step moves the slider one position (as the mouse does), which runs the
panel's recompute and updates its plot items, then repaints the whole visible page synchronously
(more than Qt repaints on its own). The median over the drag must stay within one frame (16 ms at
60 Hz). Wall time counts other programs sharing the CPU; CPU time counts only this process's work.
"update" is the recompute and plot-item update alone; "unchanged" repaints the page again with
nothing changed.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FRAME_MS = 1000 / 60
REPEATS = 3  # sweeps over each slider's positions


def drag_times(app, panel, step: int, labelled, positions) -> dict[str, list[float]]:
    """Milliseconds per drag step: the whole step in wall and CPU time (slider move → recompute →
    plot update → repaint), the update alone (CPU), and a repaint with nothing changed (CPU)."""
    panel.set_step(step)
    page = panel.pages.currentWidget()
    app.processEvents()
    times: dict[str, list[float]] = {"wall": [], "cpu": [], "update": [], "floor": []}
    for _ in range(REPEATS):
        for position in positions:
            start, start_cpu = time.perf_counter(), time.process_time()
            labelled.slider.setValue(position)
            updated = time.process_time()
            page.repaint()
            app.processEvents()
            times["wall"].append((time.perf_counter() - start) * 1000)
            times["cpu"].append((time.process_time() - start_cpu) * 1000)
            times["update"].append((updated - start_cpu) * 1000)
            start_cpu = time.process_time()
            page.repaint()
            app.processEvents()
            times["floor"].append((time.process_time() - start_cpu) * 1000)
    return times


def main() -> None:
    from PySide6.QtWidgets import QApplication

    from app import worker
    from app.panels.scale import ScalePanel

    app = QApplication.instance() or QApplication([])
    panel = ScalePanel()
    panel.resize(1100, 800)
    panel.show()
    worker.wait_idle()

    def every(labelled, stride: int = 1):
        return list(range(labelled.slider.minimum() + 1, labelled.slider.maximum() + 1, stride))

    sliders = [
        (
            "multiplier ×1…×16",
            0,
            panel.saturation.multiplier_slider,
            every(panel.saturation.multiplier_slider),
        ),
        ("d_k growth 1…1024", 1, panel.growth.growth_slider, every(panel.growth.growth_slider)),
        (
            "temperature 0.05…20",
            2,
            panel.temperature.temperature_slider,
            every(panel.temperature.temperature_slider, 20),
        ),
        ("head d_k 1…512", 3, panel.heads.head_slider, every(panel.heads.head_slider)),
    ]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':<22} {'':>5} {'whole step':>22} {'update':>8} {'unchanged':>10}")
    print(
        f"{'slider':<22} {'steps':>5} {'wall':>7} {'p90':>7} {'CPU':>6} {'CPU':>8} {'CPU':>10}  (medians, ms)"
    )
    for name, step, labelled, positions in sliders:
        t = drag_times(app, panel, step, labelled, positions)
        med = {k: statistics.median(v) for k, v in t.items()}
        p90 = statistics.quantiles(t["wall"], n=10)[-1]
        print(
            f"{name:<22} {len(t['wall']):>5} {med['wall']:>7.2f} {p90:>7.2f} {med['cpu']:>6.2f} "
            f"{med['update']:>8.2f} {med['floor']:>10.2f}"
        )
    print(f"one frame = {FRAME_MS:.1f} ms")


if __name__ == "__main__":
    main()
