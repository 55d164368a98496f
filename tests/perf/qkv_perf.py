"""Repaint latency of the Q, K, V panel at 64 tokens: time from a control change to the panel
painted (recompute + view updates + the repaint of what changed). Prints the median and p95 per control.

    python -m tests.perf.qkv_perf [repeats]
"""

import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from app.panels.qkv import QKVPanel


def timed(panel, action, repeats):
    """Median and p95 wall time, and median CPU time (steadier on a busy machine), in seconds."""
    wall, cpu = [], []
    for k in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        action(k)
        QApplication.processEvents()  # delivers the pending update requests: the panel repaints
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    wall.sort()
    return statistics.median(wall), wall[int(0.95 * (len(wall) - 1))], statistics.median(cpu)


def main(repeats: int = 60) -> None:
    app = QApplication.instance() or QApplication([])
    panel = QKVPanel()
    panel.resize(1400, 860)
    panel.show()
    panel.tokens_edit.setText(" ".join(f"w{i}" for i in range(64)))
    app.processEvents()
    model = panel.embeddings.x_view.model
    actions = {
        "seed": lambda k: panel.seed_spin.setValue(k + 1),
        "d_k": lambda k: panel.d_k_spin.setValue(4 + k % 8),
        "edit X cell": lambda k: model.setData(model.index(k % 64, 0), str(k / 10)),
        "token text": lambda k: panel.tokens_edit.setText(" ".join(f"w{i}" for i in range(63)) + f" v{k}"),
    }
    for step in (0, 4):
        panel.set_step(step)
        for name, action in actions.items():
            med, p95, cpu = timed(panel, action, repeats)
            print(
                f"step {step + 1} · {name:12} wall median {med * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms"
                f"   CPU median {cpu * 1000:6.1f} ms"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
