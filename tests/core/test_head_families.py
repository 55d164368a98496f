"""Steps 2–4 of "Inside a head" on a tiny random model of every supported family, checked against
hooks written here on transformers' own eager attention and forward pass, not core's recording.

Every norm's weight is moved off its initial value first, so a wrong gain shows (Gemma's gain is
1 + weight, and its weights start at 0)."""

import copy
import sys

import numpy as np
import pytest

from core.decoder.adapter import adapter_of, transformers_own
from core.interp.head import direct_shares, record, what_it_writes, why_here
from core.interp.head.parts import frozen_norm, head_writes
from core.models import load_model
from tests.tiny_models import FAMILY_TYPES, LLAMA_PROMPT, OUT_PROJECTIONS, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
CELLS = [(0, 1, 5, 2), (1, 2, 13, 3), (1, 0, 9, 9)]  # layer, head, query, key
AFTER_ATTENTION = {  # by hand: the norm Gemma 2 and 3 put on the attention output before the stream
    "gemma2": lambda m, layer: m.model.layers[layer].post_attention_layernorm,
    "gemma3_text": lambda m, layer: m.model.layers[layer].post_attention_layernorm,
}


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def family(request, tmp_path_factory):
    """(model type, model, ids, recorded run, what the hooks saw in transformers' own run)."""
    kind = request.param
    model = load_model(str(save_tiny_decoder(tmp_path_factory.mktemp(kind), kind)))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, weight in model.module.named_parameters():
            if "norm" in name:
                weight.add_(0.3 * torch.randn(weight.shape, generator=generator))
    ids = model.tokenizer(LLAMA_PROMPT)["input_ids"]
    return kind, model, ids, record(model, ids), seen_by_transformers(model.module, ids)


def seen_by_transformers(module, ids):
    """One run of transformers' own eager attention with hooks written here. Keeps each layer's
    query, key and scaling ("qk", layer), wrapped around the modeling module's
    ``eager_attention_forward``; each output projection's input z and output ("out", layer);
    Gemma's norm after attention, its input and output ("after", layer); and the last position's
    logits, before Gemma 2's final soft cap (switched off for this run)."""
    kind, config = module.config.model_type, module.config
    modeling = sys.modules[type(module).__module__]
    own, seen = modeling.eager_attention_forward, {}

    def wrapped(attention, query, key, value, mask, scaling=None, **kwargs):
        seen["qk", attention.layer_idx] = (query[0].double(), key[0].double(), scaling)
        return own(attention, query, key, value, mask, scaling=scaling, **kwargs)

    def keep(name, layer):
        def hook(_, args, output):
            seen[name, layer] = (args[0][0].double(), output[0].double())

        return hook

    handles = []
    for layer in range(config.num_hidden_layers):
        handles.append(OUT_PROJECTIONS[kind](module, layer).register_forward_hook(keep("out", layer)))
        if kind in AFTER_ATTENTION:
            handles.append(AFTER_ATTENTION[kind](module, layer).register_forward_hook(keep("after", layer)))
    cap = getattr(config, "final_logit_softcapping", None)
    modeling.eager_attention_forward = wrapped
    try:
        if cap is not None:
            config.final_logit_softcapping = None
        with transformers_own(module), torch.no_grad():
            seen["logits"] = module(input_ids=torch.tensor([ids])).logits[0, -1].double()
    finally:
        modeling.eager_attention_forward = own
        if cap is not None:
            config.final_logit_softcapping = cap
        for handle in handles:
            handle.remove()
    return seen


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-6)


def test_the_parts_sum_to_the_real_score_before_any_cap(family):
    kind, _, _, rec, seen = family
    for layer, head, i, j in CELLS:
        query, key, scaling = seen["qk", layer]
        group = head // (query.shape[0] // key.shape[0])  # grouped-query attention
        real = float(query[head, i] @ key[group, j]) * scaling  # Gemma 2 caps this afterwards
        split = why_here(rec, layer, head, i, j)
        assert relative(split.pairs.sum(), real) < 1e-5
        assert relative(split.query_totals.sum(), real) < 1e-5 and relative(split.score, real) < 1e-5
        assert ("caps its scores" in split.note) is (kind == "gemma2")
        if split.note:
            assert f"{50 * np.tanh(real / 50):.4f}" in split.note  # Gemma 2's cap: 50


def test_direct_shares_sum_to_the_real_logit_difference_before_any_cap(family):
    kind, _, ids, rec, seen = family
    logits = seen["logits"]  # Gemma 2's final cap switched off: the difference the shares split
    target, foil = ids[2], ids[5]
    shares = direct_shares(rec, target, foil)
    real = float(logits[target] - logits[foil])
    assert relative(shares.values.sum(), real) < 1e-5 and relative(shares.logit_difference, real) < 1e-5
    assert ("caps its logits" in shares.note) is (kind == "gemma2")


def test_a_head_writes_its_slice_of_the_output_projection_applied_to_its_z(family):
    kind, model, _, rec, seen = family
    adapter, d = adapter_of(model.module), rec.q[0].shape[-1]
    last = len(rec.ids) - 1
    for layer, head, _, j in CELLS:
        projection = OUT_PROJECTIONS[kind](model.module, layer)
        weight = projection.weight.detach()
        weight = weight.T if kind == "gpt2" else weight  # (hidden, heads · d)
        z, _ = seen["out", layer]  # (T, heads · d)
        by_hand = z[last, head * d : (head + 1) * d] @ weight[:, head * d : (head + 1) * d].double().T
        if kind in AFTER_ATTENTION:  # the norm after attention, frozen: a scale per coordinate
            before, after = seen["after", layer]
            by_hand = by_hand * after[last] / before[last]
        written = head_writes(adapter, rec, layer, last)[head]
        np.testing.assert_allclose(written, by_hand, rtol=0, atol=1e-5 * float(by_hand.abs().max()))
        writes = what_it_writes(rec, layer, head, last, j)  # step 3 at the last position is step 4's head
        (up, pushed), (down, pulled) = writes.up[0], writes.down[0]
        share = direct_shares(rec, up, down)
        assert relative(share.heads[layer, head], pushed - pulled) < 1e-4


def test_a_frozen_norm_is_the_norms_derivative_where_its_scale_stays(family):
    _, model, _, rec, _ = family
    adapter = adapter_of(model.module)
    norms = [m for m in adapter.blocks[1].modules() if "norm" in type(m).__name__.lower()]
    for norm in [*norms, adapter.final_norm]:  # every norm of a block, the final one
        x = rec.streams[1, 6] if len(norm.weight) == rec.streams.shape[-1] else rec.q[1][0, 6]
        x = x.double()
        frozen = frozen_norm(norm, x)
        centred = x - x.mean() if frozen.centre else x
        v = torch.randn(len(x), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        if frozen.centre:
            v -= v.mean()
        v -= (v @ centred) / (centred @ centred) * centred  # a direction the scale does not see
        # a step of 1% of |x|: some norms compute in float32 whatever they are given
        eps, double = 0.01 * float(x.norm() / v.norm()), copy.deepcopy(norm).double()
        with torch.no_grad():
            plus, minus = (double(x + s * eps * v) for s in (1, -1))
        expected = frozen(v).numpy()
        difference = ((plus - minus) / (2 * eps)).numpy()
        np.testing.assert_allclose(difference, expected, rtol=0, atol=2e-4 * np.abs(expected).max())
        with torch.no_grad():
            whole = frozen(x) + (0 if frozen.bias is None else frozen.bias)
            np.testing.assert_allclose(whole.numpy(), norm(x.float()).double().numpy(), atol=1e-5)


def test_step_one_row_is_the_softmax_of_what_it_receives(family):
    """Step 1's row of scores, capped where the model caps them (Gemma 2), gives the real weights."""
    from core.interp.head import head_step
    from core.maths.attention import softmax

    _, _, _, rec, _ = family
    for layer, head, query, key in CELLS:
        step = head_step(rec, layer, head, query, key)
        np.testing.assert_allclose(softmax(step.scores), step.row, atol=2e-6)
        assert step.scores[key] == pytest.approx(step.received, rel=1e-6)


def test_a_key_outside_a_sliding_layers_window_is_masked_as_transformers_masks_it(family):
    """Gemma's tiny first layer slides over 4 tokens: query 9 sees keys 6 to 9 only."""
    from core.interp.head import head_step

    kind, _, _, rec, _ = family
    window = 4 if kind in ("gemma2", "gemma3_text") else None
    assert rec.windows == [window, None]
    for key in range(10):
        step = head_step(rec, 0, 1, 9, key)
        outside = window is not None and key <= 9 - window
        assert step.masked == outside and (step.row[key] == 0) == outside
        if outside:
            assert step.hidden == f"the key is {9 - key} tokens back, outside this layer's window of 4"
