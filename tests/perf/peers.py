"""Our analyses beside the peers' on the same model and prompt, one torch thread, timed in turn
(opt-in; run it directly, prints a table of medians and ratios).

    python -m tests.perf.peers [--model smollm2|FOLDER] [--repeats 3]

Peers (the optional ``peers`` extra: pip install -e ".[peers]"): Captum's integrated gradients
(batched, and one row at a time), input × gradient and occlusion, each on the input embeddings
with a zero baseline, as ours are. Each pair of rows is checked to compute the same scores before
it is timed. A peer that is not installed is named and skipped. The table ends with this
machine's matrix-product rate and the least time integrated gradients' products could take at it.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

from tests.perf.flash_perf import interleaved_medians

PROMPT = "When Mary and John went to the store, John gave a drink to Mary, and then Sarah gave one to"
STEPS = 32  # integrated gradients' steps, midpoint rule on both sides


def matmul_rate(size: int = 1024, repeats: int = 5) -> float:
    """GFLOP/s of a float32 size × size product on the torch threads set."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9


def captum_rows(model, ids, answer) -> dict:
    """name -> (ours, Captum's, their largest score difference), the same work on both sides."""
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Occlusion

    from core.decoder.run import hooked_run
    from core.interp import token_scores as ts

    module = model.module
    # (1, T, hidden): what the first block reads, the input embeddings of a model without a table
    # of learned positions (SmolLM2, Gemma 3), which Captum's runs take as inputs_embeds
    embeds = hooked_run(model, ids, cache=[("resid_pre", 0)], unembed=False).cache["resid_pre", 0]

    def metric(inputs_embeds):  # (B,) logit(target) − logit(foil) at the last position
        logits = module(inputs_embeds=inputs_embeds, use_cache=False, logits_to_keep=1).logits
        return answer.of(logits)

    zero = torch.zeros_like(embeds)
    ig = IntegratedGradients(metric)
    along = lambda a: a.sum(-1)  # noqa: E731  (T, hidden) attributions -> (T,) scores
    runs = {  # name: (ours, Captum's, Captum's attributions as our scores)
        "integrated gradients, 32 steps, batched": (
            lambda: ts.integrated_gradients(model, ids, answer, STEPS).scores,
            lambda: ig.attribute(
                embeds, zero, n_steps=STEPS, method="riemann_middle", internal_batch_size=STEPS
            ),
            along,
        ),
        "integrated gradients, 32 steps, one row a pass": (
            lambda: ts.integrated_gradients(model, ids, answer, STEPS).scores,
            lambda: ig.attribute(embeds, zero, n_steps=STEPS, method="riemann_middle", internal_batch_size=1),
            along,
        ),
        "gradient × input": (
            lambda: ts.grad_x_input(model, ids, answer)[0],
            lambda: InputXGradient(metric).attribute(embeds.clone().requires_grad_(True)),
            along,
        ),
        "occlusion": (  # each token's whole row occluded: every cell of the row holds its change
            lambda: ts.occlusion(model, ids, answer),
            lambda: Occlusion(metric).attribute(
                embeds,
                sliding_window_shapes=(1, embeds.shape[-1]),
                baselines=0,
                perturbations_per_eval=ts.rows_per_run(len(ids)),
            ),
            lambda a: a[:, 0],
        ),
    }
    out = {}
    for name, (ours, theirs, scores) in runs.items():
        mine = np.asarray(ours(), dtype=np.float64)
        peer = scores(theirs().detach().double()[0]).numpy()
        out[name] = (ours, theirs, float(np.abs(mine - peer).max()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch

    from core import models
    from core.interp import token_scores as ts
    from core.interp.prediction import encode
    from core.interp.ranking import answer_token

    torch.set_num_threads(1)
    model = models.load_model(args.model, expect=models.DECODER)
    ids = encode(model, PROMPT)[0][-20:]
    answer = ts.Answer(*(answer_token(model.tokenizer, w, PROMPT).id for w in ("Mary", "John")))
    print(
        f"{model.name}, {len(ids)} tokens, torch threads {torch.get_num_threads()}, medians of {args.repeats}"
    )
    print(f"{'analysis':<48} {'ours s':>8} {'peer s':>8} {'peer/ours':>9}  same scores to")
    if importlib.util.find_spec("captum") is None:
        print('Captum is not installed: its rows are skipped (pip install -e ".[peers]").')
    else:
        for name, (ours, theirs, off) in captum_rows(model, ids, answer).items():
            t = interleaved_medians({"ours": ours, "peer": theirs}, args.repeats)
            print(f"{name:<48} {t['ours']:8.3f} {t['peer']:8.3f} {t['peer'] / t['ours']:8.2f}x  {off:.1e}")
    if importlib.util.find_spec("transformer_lens") is None:
        print(
            "TransformerLens is not installed: patching, edge attribution and detect_head are not compared."
        )
    rate = matmul_rate()
    hidden, layers = model.module.config.hidden_size, model.n_layers
    weights = sum(p.numel() for n, p in model.module.named_parameters() if "embed" not in n)
    forward = 2 * weights * len(ids) + 4 * layers * len(ids) ** 2 * hidden  # a forward pass's products
    least = STEPS * 2 * forward / (rate * 1e9)  # a forward and an input-gradient backward per step
    print(
        f"matrix products: {rate:.1f} GFLOP/s on one thread; integrated gradients' products "
        f"take {least:.2f} s at that rate"
    )


if __name__ == "__main__":
    main()
