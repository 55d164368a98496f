"""Speed of "which words mattered" on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.token_scores_perf [--model smollm2|FOLDER]

A 20-token prompt, the metric logit(target) − logit(foil): attention and rollout from one run
(target ≤ 200 ms), gradient × input (≤ 400 ms), integrated gradients with 32 steps (≤ 3 s),
occlusion (≤ 1.5 s).
"""

from __future__ import annotations

import argparse

from tests.perf.stream_perf import median_ms

PROMPT = "When Mary and John went to the store, John gave a drink to Mary, and then Sarah gave one to"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    args = parser.parse_args()
    import torch

    from core import models
    from core.interp import token_scores as ts
    from core.interp.prediction import encode
    from core.interp.ranking import answer_token

    model = models.load_model(args.model, expect=models.DECODER)
    ids = encode(model, PROMPT)[0][-20:]
    answer = ts.Answer(*(answer_token(model.tokenizer, w, PROMPT).id for w in ("Mary", "John")))
    print(f"{model.name}: {len(ids)} tokens, torch threads {torch.get_num_threads()}")
    for name, action, repeats in (
        ("attention and rollout", lambda: ts.rollout(ts.attention_rows(model, ids)), 7),
        ("gradient × input", lambda: ts.grad_x_input(model, ids, answer), 7),
        ("integrated gradients, 32 steps", lambda: ts.integrated_gradients(model, ids, answer, 32), 3),
        ("occlusion", lambda: ts.occlusion(model, ids, answer), 3),
    ):
        med, top = median_ms(action, repeats)
        print(f"{name}: median {med:.0f} ms, max {top:.0f} ms")


if __name__ == "__main__":
    main()
