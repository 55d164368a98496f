"""Speed of the head atlas on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.atlas_perf [--model smollm2|FOLDER] [--threads N]

With the model loaded once: every score of every head, as a model's first atlas computes them (two
runs, W_E W_U once and one small eigenproblem per head) and as a later one does (the copying scores
are kept per model: two runs), the copying scores alone, one head's query–key cloud (≤ 300 ms) and
its OV reading, which with the cloud is what another head costs once the atlas is kept.
"""

from __future__ import annotations

import argparse

from tests.perf.stream_perf import median_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from core import models
    from core.interp.atlas import copying_scores, head_atlas, ov_reading, qk_cloud

    model = models.load_model(args.model, expect=models.DECODER)
    print(f"{model.name}: {model.n_layers} × {model.n_heads} heads, torch threads {torch.get_num_threads()}")
    atlas = head_atlas(model)
    group = model.n_heads // model.n_kv_heads
    for name, action, repeats in (
        ("every score, a model's first atlas", lambda: (copying_scores(model), head_atlas(model)), 5),
        ("every score, a later atlas (copying kept)", lambda: head_atlas(model, seed=1), 5),
        ("the copying scores alone", lambda: copying_scores(model), 5),
        ("one head's cloud", lambda: qk_cloud(atlas, model.n_layers // 2, [0]), 9),
        ("the cloud of heads sharing keys", lambda: qk_cloud(atlas, model.n_layers // 2, range(group)), 9),
        ("one head's OV reading (step 4)", lambda: ov_reading(model, model.n_layers // 2, 0, 1000), 9),
    ):
        med, top = median_ms(action, repeats)
        print(f"{name}: median {med:.0f} ms, max {top:.0f} ms")


if __name__ == "__main__":
    main()
