"""How long the multi-head panel takes to follow a change of h or of the temperature.

    python -m tests.perf.multihead_perf [--repeats 30]

At 128 tokens, d_model 512, 8 heads (target: all heads repainted within 33 ms). Each change is
timed from the control's new value until the panel has been repainted synchronously; the core
calls alone are timed next to it. Prints medians of wall time and of this process's CPU time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import app  # noqa: F401  (sets up the process before Qt is used)


def median_ms(samples: list[tuple[float, float]]) -> str:
    """Median wall time and median CPU time of this process (all threads), in milliseconds.

    On a busy machine the wall time includes waiting for a core; the CPU time does not.
    """
    wall = 1000 * statistics.median(w for w, _ in samples)
    cpu = 1000 * statistics.median(c for _, c in samples)
    return f"{wall:7.1f} ms wall {cpu:7.1f} ms CPU"


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    import numpy as np
    from PySide6.QtWidgets import QApplication

    from app.panels.multihead import MultiHeadPanel
    from core.maths.multihead import attend_heads, head_table, multi_head, project_heads, random_weights

    qt = QApplication.instance() or QApplication([])
    panel = MultiHeadPanel()
    panel.resize(1100, 850)
    panel.show()
    panel.tokens_edit.setText(" ".join(f"w{k}" for k in range(128)))
    panel.d_model_spin.setValue(512)
    panel.choose_heads(8)
    panel.choose_heads(4)  # build the grid for both head counts before timing
    panel.choose_heads(8)
    qt.processEvents()

    def timed(change) -> tuple[float, float]:
        start = clock()
        change()
        panel.repaint()
        return since(start)

    def core_timed(call) -> tuple[float, float]:
        start = clock()
        call()
        return since(start)

    temperatures = [float(t) for t in np.geomspace(0.3, 3.0, 7)]
    heads = [timed(lambda k=k: panel.choose_heads(4 if k % 2 == 0 else 8)) for k in range(args.repeats)]
    panel.choose_heads(8)
    temperature = [
        timed(lambda k=k: panel.temperature_slider.setValue(temperatures[k % 7])) for k in range(args.repeats)
    ]
    model = random_weights(np.random.default_rng(42), [f"w{k}" for k in range(128)], 512)
    W_Q, W_K, W_V, W_O = model.split(8, 0.1)
    projections = project_heads(model.X, W_Q, W_K, W_V)
    full = [
        core_timed(lambda: head_table(multi_head(model.X, W_Q, W_K, W_V, W_O, temperature=0.5)))
        for _ in range(args.repeats)
    ]
    attention_only = [
        core_timed(lambda: head_table(attend_heads(*projections, W_O, temperature=0.5)))
        for _ in range(args.repeats)
    ]

    print(f"128 tokens, d_model 512, 8 heads, {args.repeats} repeats (median)")
    print(f"  change h 8 ↔ 4, recompute + repaint      : {median_ms(heads)}")
    print(f"  change temperature, recompute + repaint  : {median_ms(temperature)}")
    print(f"  core: multi_head + head_table            : {median_ms(full)}")
    print(f"  core: attend_heads + head_table (T change): {median_ms(attention_only)}")


if __name__ == "__main__":
    main()
