"""Speed of the decoder core on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.decoder_perf        # needs the converted model: attention-lab models add smollm2

Measures, in one process:
  1. load from the converted folder, warm (torch and transformers imported before the clock starts);
  2. prompt → predictions at 16 tokens: one forward pass with every head's weights, then the
     distribution and its top 10;
  3. a temperature / top-k / top-p change: the distribution and its top 10 again (no model run);
  4. one decode step at 64 tokens, with the cache and without it (side by side, core.decoder.time_decode);
  5. in the Next token panel (offscreen): prompt edit → predictions drawn at 16 tokens, and the
     longest UI stall while the panel loads the model, runs a prompt and decodes a token.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from core import models
from core.interp import decode_timing, prediction
from core.maths import sampling
from core.models import smollm2
from tests.perf.timing import median_ms

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PROMPT = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch of his old "
    "house, drinking coffee and wondering whether the rain will come before the harvest is in."
)
REPEATS = 7
SETTINGS = [(0.3, None, 1.0), (0.7, 50, 0.9), (1.0, None, 0.95), (2.0, 5, 1.0), (0.05, None, 0.5)]


def main() -> None:
    if smollm2.installed_folder() is None:
        raise SystemExit(f"{smollm2.NAME} is not added; {smollm2.ADD_HINT}")
    models.libraries()
    models.load_model("smollm2", expect=models.DECODER)  # first load: file cache, lazy imports
    load = median_ms(lambda: models.load_model("smollm2", expect=models.DECODER), repeats=3, warm_up=False)
    model = models.load_model("smollm2", expect=models.DECODER)
    ids16 = prediction.encode(model, PROMPT)[0][:16]

    def predictions():  # what the panel runs for a prompt: all heads' weights and the cache kept
        p = prediction.prefill(model, ids16, keep_cache=True)
        sampling.top(sampling.reshape(p.logits), 10)

    predict = median_ms(predictions, REPEATS, warm_up=False)
    logits = prediction.prefill(model, ids16).logits
    cycle = iter(SETTINGS * REPEATS)
    reshape = median_ms(
        lambda: sampling.top(sampling.reshape(logits, *next(cycle)), 10),
        repeats=len(SETTINGS) * 3,
        warm_up=False,
    )
    timing = decode_timing.time_decode(model, prediction.encode(model, PROMPT)[0], tokens=64, repeats=REPEATS)

    print(f"{'measure':<52} {'median':>10}  target")
    print(f"{'load from the converted folder (warm)':<52} {load / 1000:>8.2f} s  ≤ 3 s")
    print(f"{'prompt → predictions, 16 tokens (all heads)':<52} {predict:>7.1f} ms  ≤ 300 ms (+ drawing)")
    print(f"{'temperature / top-k / top-p change':<52} {reshape:>7.1f} ms  ≤ 16 ms")
    print(f"{'decode step at 64 tokens, with the KV cache':<52} {1000 * timing.cached:>7.1f} ms  ≤ 100 ms")
    print(f"{'decode step at 64 tokens, without (all 64 again)':<52} {1000 * timing.uncached:>7.1f} ms")
    print(f"{'speed-up from the cache (same run)':<52} {timing.speedup:>8.1f} ×")
    panel_measures(model.tokenizer.decode(ids16))


def panel_measures(prompt16: str) -> None:
    from PySide6.QtWidgets import QApplication

    from app import settings, worker
    from app.panels.next_token import NextTokenPanel
    from tests.perf.model_perf import max_stall_during

    settings.use_folder(tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    panel = NextTokenPanel()
    panel.resize(1300, 800)

    def idle() -> bool:
        return not panel.busy and panel.writing.run.task is None and not worker.busy()

    load_stall = max_stall_during(panel.show, lambda: panel.writing.generation is not None and idle())
    drawn = []
    for k in range(REPEATS):
        start = time.perf_counter()
        panel.prompt.setText(prompt16 + " " * (k % 2))  # a real change every time
        worker.wait_idle()
        app.processEvents()  # the step on screen repaints
        drawn.append(time.perf_counter() - start)
    run_stall = max_stall_during(lambda: panel.prompt.setText(prompt16 + " ."), idle)
    step_stall = max_stall_during(panel.writing.append_sample, idle)
    draw_ms = 1000 * statistics.median(drawn)
    print(f"{'panel: prompt edit → predictions drawn, 16 tokens':<52} {draw_ms:>7.1f} ms  ≤ 300 ms")
    print(f"{'panel: longest UI stall while loading':<52} {load_stall:>7.0f} ms  ≤ 100 ms")
    print(f"{'panel: longest UI stall during a prompt run':<52} {run_stall:>7.0f} ms  ≤ 100 ms")
    print(f"{'panel: longest UI stall during a decode step':<52} {step_stall:>7.0f} ms  ≤ 100 ms")


if __name__ == "__main__":
    main()
