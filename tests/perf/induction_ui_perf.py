"""The "Grow an induction head" panel while it trains: frame gaps, redraws, Pause, Cancel and close.

Run from the project root:  python -m tests.perf.induction_ui_perf [--seconds 20] [--shots DIR]
Also says how long opening the panel holds the UI thread and when its first example is drawn.
Targets: frame gaps ≤ 50 ms while training, plots redrawn at most about 10 times a second, Pause
and Cancel take effect within 100 ms, closing the window stops the training.
A 16 ms timer on the UI thread stands in for frames: a gap is the time between two of its ticks.
With --shots, the window is saved during and after a training run (one PNG per step).
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import settings, worker  # noqa: E402
from app.panels.training import phase  # noqa: E402
from app.window import MainWindow  # noqa: E402

FRAME_MS = 16


def pump(app, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)


def pump_until(app, done, timeout_s: float = 30.0) -> float:
    """Process events until ``done()``; the seconds it took."""
    start = time.perf_counter()
    while not done() and time.perf_counter() - start < timeout_s:
        app.processEvents()
        time.sleep(0.0005)
    return time.perf_counter() - start


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="how long to watch the frames while training"
    )
    parser.add_argument("--shots", type=Path, help="save screenshots here")
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    settings.use_folder(folder.name)
    app = QApplication.instance() or QApplication([])
    window = MainWindow()
    window.resize(1500, 900)
    window.show()
    start = time.perf_counter()
    panel = window.show_panel("induction")
    opened = time.perf_counter() - start
    imported = "torch" in sys.modules
    waited = pump_until(app, lambda: panel.task.result is not None)
    print(
        f"opening the panel: {opened * 1e3:.0f} ms on the UI thread (torch imported on it: "
        f"{'yes' if imported else 'no'}); the task's example drawn {waited:.1f} s later"
    )
    panel.set_step(1)
    page, live = panel.train, panel.training

    draws = []
    original = page.draw

    def timed_draw(result):
        start = time.perf_counter()
        notice = original(result)
        draws.append((start, time.perf_counter() - start))
        return notice

    page.draw = timed_draw  # Step.refresh draws each checkpoint that lands while the step is shown
    trained = [0]  # the last step the run reported
    live.progressed.connect(lambda done, _total: trained.__setitem__(0, done))

    ticks = []
    timer = QTimer()
    timer.setInterval(FRAME_MS)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    idle_from = time.perf_counter()
    pump(app, args.seconds / 3)  # the same frames with nothing training: what the machine itself gives
    idle = [(b - a) * 1e3 for a, b in itertools.pairwise(ticks) if a >= idle_from]
    print(
        f"idle, {args.seconds / 3:.0f} s: frame gaps median {statistics.median(idle):.1f} ms, "
        f"95th percentile {percentile(idle, 0.95):.1f} ms, max {max(idle):.1f} ms; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    page.start()
    t0 = time.perf_counter()
    pump(app, args.seconds)
    watched_steps = trained[0]
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(args.shots / "induction-training.png"))
    gaps = [(b - a) * 1e3 for a, b in itertools.pairwise(ticks) if a >= t0]
    in_window = [d for d in draws if d[0] >= t0]
    print(
        f"default run, {args.seconds:.0f} s watched: {watched_steps} steps "
        f"({watched_steps / args.seconds:.1f} steps/s)"
    )
    print(
        f"frame gaps: median {statistics.median(gaps):.1f} ms, "
        f"95th percentile {percentile(gaps, 0.95):.1f} ms, "
        f"max {max(gaps):.1f} ms over {len(gaps)} frames (timer {FRAME_MS} ms)"
    )
    worst = sorted(((b - a, a) for a, b in itertools.pairwise(ticks) if a >= t0), reverse=True)[:3]
    for gap, at in worst:
        during = [d for d in draws if at - 0.5 <= d[0] <= at + gap]
        what = f"a redraw of {during[0][1] * 1e3:.0f} ms started in it" if during else "no redraw in it"
        print(f"  gap of {gap * 1e3:.0f} ms at {at - t0:.2f} s: {what}")
    spacing = [(b[0] - a[0]) * 1e3 for a, b in itertools.pairwise(in_window)]
    print(
        f"redraws: {len(in_window) / args.seconds:.1f} a second, each median "
        f"{statistics.median(d[1] for d in in_window) * 1e3:.1f} ms "
        f"(max {max(d[1] for d in in_window) * 1e3:.1f} ms), "
        f"closest two {min(spacing):.0f} ms apart"
    )

    if phase(live) == "running" and trained[0] > page.steps_spin.value() - 200:
        pump_until(app, lambda: phase(live) != "running")  # too near its end to pause five times
    if phase(live) != "running":  # the default run finished: pause a longer one
        page.steps_spin.setValue(20_000)
        page.start()
        pump(app, 1.0)
    pauses = []
    for _ in range(5):
        start = time.perf_counter()
        page.pause_button.click()
        pump_until(app, lambda: phase(live) == "paused" and live.task is None)
        pauses.append((time.perf_counter() - start) * 1e3)
        step = live.result.run.step  # the model's own count
        pump(app, 0.3)
        assert live.result.run.step == step, "training went on while paused"
        page.start()  # resume
        pump(app, 0.3)
    print(
        f"pause → stopped, its step measured and shown: median {statistics.median(pauses):.0f} ms, "
        f"max {max(pauses):.0f} ms (5 pauses)"
    )

    task = live.task
    start = time.perf_counter()
    page.reset_button.click()
    cancel = pump_until(app, lambda: task.done) * 1e3
    print(f"reset while training → worker finished: {cancel:.0f} ms")

    if args.shots:
        panel.settings.apply(steps=800)
        page.start()
        pump_until(app, lambda: phase(live) == "done", timeout_s=600)
        panel.one_layer.start()
        pump_until(app, lambda: phase(panel.one_layer_training) == "done", timeout_s=600)
        panel.knockout.text_edit.setText("3 9 14 1 7 12 40 22 3 9 14 1 7 12 40 22")
        worker.wait_idle()
        for i in range(len(panel.steps)):
            panel.set_step(i)
            pump(app, 0.2)
            window.grab().save(str(args.shots / f"induction-step{i + 1}.png"))
        print(f"screenshots in {args.shots}")

    page.start()
    pump(app, 2.0)
    task = live.task
    start = time.perf_counter()
    window.close()
    closed = (time.perf_counter() - start) * 1e3
    pump_until(app, lambda: task.done, timeout_s=5)
    print(f"window closed while training → training stopped: {task.done} after {closed:.0f} ms")


if __name__ == "__main__":
    main()
