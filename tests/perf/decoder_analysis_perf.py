"""Speed of the decoder analyses on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.decoder_analysis_perf [--model smollm2|FOLDER] [--threads N]

Measures, on a 15-token prompt, with the model loaded once (eager attention, float32):
  1. one clean forward pass, and one re-run with a head knocked out (targets ≤ 300 ms);
  2. the full ranking of every head by ablation, batched one layer per pass (target ≤ 30 s);
  3. the logit lens (target ≤ 300 ms), with its own forward pass and from the residual streams
     of a pass already run (as the panel reads them);
  4. attention sinks with the first token dropped, and the induction test on 2 × 30 tokens;
  5. in the panel: a click on a head → both predictions drawn; a prompt typed in the logit lens
     step → the grid drawn, for a prompt the other steps already ran and for a new one, and a new
     target for the same prompt (its rank alone is read again); and the
     longest UI stall while the full ranking runs in the worker (target ≤ 100 ms).
On a machine shared with other work, ``--threads 1`` keeps torch's threads from waiting on
each other; the thread count used is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from tests.perf.timing import wall_times_ms

PROMPT = "When Mary and John went to the store, John gave a bottle of milk to"
REFERENCE = "The old library stood at the end of the street, and every morning people came to read."
REPEATS = 9


def median_ms(action, repeats: int = REPEATS) -> tuple[float, float]:
    """(median, max) wall time of ``action()`` in ms over ``repeats`` calls, after one warm-up."""
    times = wall_times_ms(action, repeats)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--rankings", type=int, default=3, help="how many full rankings to time")
    parser.add_argument("--no-panel", action="store_true", help="skip the panel measurements")
    args = parser.parse_args()

    import torch

    from core import models
    from core.interp.ablation import ablated, head_means, next_token_probs, run
    from core.interp.induction import random_induction_test
    from core.interp.lens import logit_lens, read_streams, streams_of
    from core.interp.ranking import answer_token, rank_by_ablation
    from core.interp.sinks import sink_scores, without_first_token

    if args.threads:
        torch.set_num_threads(args.threads)
    loaded = models.load_model(args.model, expect=models.DECODER)
    tokenizer, model = loaded.tokenizer, loaded
    ids = tokenizer(PROMPT)["input_ids"]
    target, foil = answer_token(tokenizer, "Mary", PROMPT), answer_token(tokenizer, "John", PROMPT)
    rng = np.random.default_rng(0)
    print(
        f"{len(ids)} tokens, torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}"
    )

    med, top = median_ms(lambda: next_token_probs(model, ids))
    print(f"clean forward pass: median {med:.0f} ms, max {top:.0f} ms")

    layers, heads = model.n_layers, model.n_heads

    def one_ablation():
        layer, head = int(rng.integers(layers)), int(rng.integers(heads))
        with ablated(model, [(layer, head)]):
            next_token_probs(model, ids)

    med, top = median_ms(one_ablation)
    print(f"one ablation re-run (zero, random head): median {med:.0f} ms, max {top:.0f} ms")
    means = head_means(loaded, tokenizer(REFERENCE)["input_ids"])

    def one_mean_ablation():
        with ablated(model, [(int(rng.integers(layers)), int(rng.integers(heads)))], "mean", means):
            next_token_probs(model, ids)

    med, top = median_ms(one_mean_ablation)
    print(f"one ablation re-run (mean, random head): median {med:.0f} ms, max {top:.0f} ms")

    seconds = []
    for _ in range(args.rankings):
        start = time.perf_counter()
        ranking = rank_by_ablation(model, ids, target, foil)
        seconds.append(time.perf_counter() - start)
    best = ranking.ranking.best
    print(
        f"ranking all {layers * heads} heads by ablation: median {statistics.median(seconds):.1f} s, "
        f"max {max(seconds):.1f} s (top head: {best})"
    )

    med, top = median_ms(lambda: logit_lens(loaded, ids, target.id))
    lens = logit_lens(loaded, ids, target.id)
    print(f"logit lens, {layers} layers × {len(ids)} positions: median {med:.0f} ms, max {top:.0f} ms "
          f"(target on top from layer {(lens.formed_at() or 0) + 1})")  # fmt: skip
    streams = streams_of(loaded, ids)
    med, top = median_ms(lambda: read_streams(loaded, streams, target.id))
    print(f"logit lens of a forward pass already run: median {med:.0f} ms, max {top:.0f} ms")

    med, top = median_ms(
        lambda: (sink_scores(run(model, ids, attentions=True)[1]), without_first_token(model, ids))
    )
    print(f"attention sinks + first token dropped: median {med:.0f} ms, max {top:.0f} ms")

    med, top = median_ms(lambda: random_induction_test(model, 30, 0), repeats=5)
    test = random_induction_test(model, 30, 0)
    print(
        f"induction test, 2 × 30 tokens: median {med:.0f} ms, max {top:.0f} ms "
        f"(loss {test.loss_first:.2f} → {test.loss_second:.2f} nats)"
    )
    if not args.no_panel:
        panel_timings(args.model)


def panel_timings(source: str) -> None:
    """Click → drawn in step 1, and the longest UI stall during a ranking, in the real panel."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app import settings, worker
    from app.panels.inside_decoder import InsideDecoderPanel
    from tests.perf.model_perf import max_stall_during

    settings.use_folder(tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    panel = InsideDecoderPanel()
    panel.resize(1400, 900)
    panel.show()
    panel.use_model(source)
    worker.wait_idle(600)
    panel.knock.prompt.setText(PROMPT)
    worker.wait_idle(600)
    rng = np.random.default_rng(1)
    times = []
    for _ in range(REPEATS):
        layer, head = int(rng.integers(panel.row.model.n_layers)), int(rng.integers(panel.row.model.n_heads))
        start = time.perf_counter()
        panel.knock.grid.clicked.emit(layer, head)
        worker.wait_idle(600)
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
    print(f"panel, click a head -> both predictions drawn: median {statistics.median(times):.0f} ms, "
          f"max {max(times):.0f} ms")  # fmt: skip
    panel.set_step(2)
    seen = [f"{PROMPT} {word}" for word in ("Mary", "her", "them", "the", "a", "him")]
    new = [f"{PROMPT} {word}" for word in ("his", "our", "my", "one", "two", "all", "some", "each", "this")]
    for prompt in seen:  # the intact model's runs over these are kept, as after visits to the steps
        panel.knock.prompt.setText(prompt)
        worker.wait_idle(600)
    for label, prompts in (("a prompt another step ran", seen), ("a new prompt", new)):
        times = []
        for i in range(REPEATS):
            start = time.perf_counter()
            panel.lens.prompt.setText(prompts[i % len(prompts)])
            worker.wait_idle(600)
            app.processEvents()
            times.append((time.perf_counter() - start) * 1000)
        print(f"panel, logit lens, {label} -> grid drawn: median {statistics.median(times):.0f} ms, "
              f"max {max(times):.0f} ms")  # fmt: skip
    times = []
    for i in range(REPEATS):  # the prompt stays: only the target's rank is read again
        start = time.perf_counter()
        panel.lens.target.setText(("John", "Mary", "store", "drink")[i % 4])
        worker.wait_idle(600)
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
    print(f"panel, logit lens, a new target -> grid drawn: median {statistics.median(times):.0f} ms, "
          f"max {max(times):.0f} ms")  # fmt: skip
    panel.set_step(1)
    start = time.perf_counter()
    stall = max_stall_during(lambda: panel.rank.ranked.setChecked(True), lambda: panel.rank.live.task is None)
    took = time.perf_counter() - start
    idle = max_stall_during(lambda: None, lambda: time.perf_counter() - start > 2 * took)  # as long again
    print(f"panel, longest UI stall while all heads are ranked in the worker: {stall:.0f} ms "
          f"(with nothing running, for as long: {idle:.0f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
