"""Our analyses beside the peers' on the same model and prompt, one torch thread, timed in turn
(opt-in; run it directly, prints a table of medians and ratios).

    python -m tests.perf.peers [--model smollm2|FOLDER] [--repeats 3]

Peers (the optional ``peers`` extra: pip install -e ".[peers]"): Captum's integrated gradients
(batched, and one row at a time), input × gradient and occlusion, each on the input embeddings
with a zero baseline, as ours are; TransformerLens's activation patching (the residual stream
entering each block by position, each head's output at every position) on the IOI pair, every
head's weights from its cache rolled out (by our rollout: it has none), edge attribution
patching written on its hooks (split q/k/v inputs, each head's result, backward hooks: it has no
EAP function of its own), its residual stream split into its parts (``run_with_cache`` +
``decompose_resid``), and its three head detectors (previous token on the atlas's text,
duplicate token and induction on its repeated tokens) beside our atlas's six scores. Each pair
of rows is checked to compute the same numbers before it is timed (the detectors score
differently from the atlas: timed only). A peer's row slower than a minute is timed once, by
that check. A peer that is not installed is named and skipped. The table ends with this
machine's matrix-product rate and the least time integrated gradients' products could take at it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
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


def quietly(action):
    """``action`` with what it writes to stderr (TransformerLens's progress bars) dropped."""

    def run():
        with contextlib.redirect_stderr(io.StringIO()):
            return action()

    return run


def lens_rows(model, folder) -> dict:
    """name -> (ours, TransformerLens's, their largest difference or None, their time if timed once)."""
    import torch
    from transformer_lens import head_detector
    from transformer_lens import patching as tl_patching
    from transformer_lens.model_bridge import TransformerBridge

    from core.interp import atlas as atlases
    from core.interp import circuits
    from core.interp import token_scores as ts
    from core.interp.patching import patch, prepare
    from core.interp.stream import stream_journey
    from tests.perf.patching_perf import CLEAN, CORRUPT

    bridge = TransformerBridge.boot_transformers(str(folder), device="cpu")
    bridge.eval()
    pair = prepare(model, CLEAN, CORRUPT, " Mary", " John")
    clean, corrupt = torch.tensor([pair.clean]), torch.tensor([pair.corrupt])

    def metric(logits):  # logit(target) − logit(foil) at the last position, as patching's
        return logits[0, -1, pair.target.id] - logits[0, -1, pair.foil.id]

    def grid(get):
        with torch.no_grad():
            return get(bridge, corrupt, bridge.run_with_cache(clean)[1], metric)

    def parts():
        with torch.no_grad():
            cache = bridge.run_with_cache(clean)[1]
        return cache.decompose_resid(layer=bridge.cfg.n_layers, pos_slice=-1)[:, 0]

    repeated = model.tokenizer.decode(atlases.repeat_probe(model, atlases.LENGTH, 0)[1:])

    def detectors():
        with torch.no_grad():
            return [
                head_detector.detect_head(bridge, text, name)
                for text, name in (
                    (atlases.NATURAL, "previous_token_head"),
                    (repeated, "duplicate_token_head"),
                    (repeated, "induction_head"),
                )
            ]

    def edges():  # EAP on its hooks (it has no EAP of its own): the way its users write one
        layers = bridge.cfg.n_layers
        senders = ["blocks.0.hook_resid_pre"] + [
            f"blocks.{n}.{hook}" for n in range(layers) for hook in ("attn.hook_result", "hook_mlp_out")
        ]  # fmt: skip
        receivers = [
            f"blocks.{n}.{hook}"
            for n in range(layers)
            for hook in ("attn.hook_q_input", "attn.hook_k_input", "attn.hook_v_input", "hook_mlp_in")
        ] + [f"blocks.{layers - 1}.hook_resid_post"]
        flags = (bridge.set_use_attn_result, bridge.set_use_split_qkv_input, bridge.set_use_hook_mlp_in)
        for flag in flags:
            flag(True)
        seen: dict = {"clean": {}, "corrupt": {}, "grad": {}}

        def keep(where, name):
            return lambda tensor, hook: seen[where].__setitem__(name, tensor.detach())

        with torch.no_grad():
            bridge.run_with_hooks(clean, fwd_hooks=[(n, keep("clean", n)) for n in senders])
        with bridge.hooks(
            fwd_hooks=[(n, keep("corrupt", n)) for n in senders],
            bwd_hooks=[(n, keep("grad", n)) for n in receivers],
        ):
            metric(bridge(corrupt)).backward()
        for flag in flags:
            flag(False)

        def rows(where, names):  # (S or R, T, hidden): a head's or a key/value head's own row
            found = [seen[where][n][0] for n in names]
            return torch.stack([r for x in found for r in (x.unbind(1) if x.ndim == 3 else [x])]).double()

        change = rows("clean", senders) - rows("corrupt", senders)
        return torch.einsum("std,rtd->sr", change, rows("grad", receivers))

    def same_edges(ours, theirs):  # ours are normalised by the metric's distance
        exists = ours.graph.exists
        return float(np.abs(ours.values[exists] * ours.ends.distance - theirs.numpy()[exists]).max())

    def weights_rolled():  # every head's weights from its cache, rolled out as ours are
        with torch.no_grad():
            cache = bridge.run_with_cache(clean, names_filter=lambda n: n.endswith("attn.hook_pattern"))[1]
        patterns = torch.stack([cache["pattern", n][0] for n in range(bridge.cfg.n_layers)])
        return ts.rollout(patterns.double().numpy())

    runs = {  # name: (ours, theirs, (ours' result, theirs') -> largest difference or None)
        "every head's weights, rolled out": (
            lambda: ts.rollout(ts.attention_rows(model, pair.clean)),
            weights_rolled,
            lambda a, b: float(np.abs(a - b).max()),
        ),
        "edge attribution patching, every edge": (
            lambda: circuits.edge_scores(model, pair, "eap"),
            edges,
            same_edges,
        ),
        "patching: the residual stream by position": (
            lambda: patch(model, pair, "resid").raw[:-1],  # TransformerLens: resid_pre only
            lambda: grid(tl_patching.get_act_patch_resid_pre),
            lambda a, b: float(np.abs(a - b.double().numpy()).max()),
        ),
        "patching: each head's output, every position": (
            lambda: patch(model, pair, "heads").raw,
            lambda: grid(tl_patching.get_act_patch_attn_head_out_all_pos),
            lambda a, b: float(np.abs(a - b.double().numpy()).max()),
        ),
        "one token's residual stream in its parts": (
            lambda: stream_journey(model, pair.clean).parts,
            parts,
            lambda a, b: float(np.abs(a - b.double().numpy()).max()),
        ),
        "head atlas: our 6 scores / their 3 detectors": (
            lambda: atlases.head_atlas(model, seed=1),  # a later atlas: the copying scores kept
            detectors,
            lambda a, b: None,
        ),
    }
    out = {}
    for name, (ours, loud, compare) in runs.items():
        theirs = quietly(loud)
        start = time.perf_counter()
        peer = theirs()
        took = time.perf_counter() - start
        out[name] = (ours, theirs, compare(ours(), peer), took if took > 60 else None)
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
        print('TransformerLens is not installed: its rows are skipped (pip install -e ".[peers]").')
    else:
        from core.models.registry import resolve

        for name, (ours, theirs, off, once) in lens_rows(model, resolve(args.model)[0]).items():
            runs = {"ours": ours} if once else {"ours": ours, "peer": theirs}
            t = interleaved_medians(runs, args.repeats) | ({"peer": once} if once else {})
            same = "timed only" if off is None else f"{off:.1e}"
            print(
                f"{name:<48} {t['ours']:8.3f} {t['peer']:8.3f} {t['peer'] / t['ours']:8.2f}x  {same}"
                + (" (peer timed once)" if once else "")
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
