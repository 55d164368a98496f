"""The residual stream of one token (core.interp.stream) on a tiny random model of every supported
family: each part against the output of the family's own modules read by hooks written here, the
parts' sum against the stream transformers' run leaves the last block with, the lens beside it."""

from functools import reduce

import numpy as np
import pytest

from core import models
from core.decoder.adapter import adapter_of
from core.interp.lens import logit_lens
from core.interp.stream import SCALED, check_position, direct_effects, grouped, norm_step, stream_journey
from tests.tiny_models import FAMILY_TYPES, PARTS, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
TEXT = "the cat sat on the mat because it was warm"
# Written by hand from each family's modeling file: the norms Gemma 2 and 3 put on what attention
# and the MLP write before it joins the stream.
AFTER = {t: ("post_attention_layernorm", "post_feedforward_layernorm") for t in ("gemma2", "gemma3_text")}
# The norm each block's attention reads the stream through.
PRE = {t: "input_layernorm" for t in FAMILY_TYPES} | {"gpt2": "ln_1"}


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = models.load_model(folder)
    return model, request.param, model.tokenizer(TEXT)["input_ids"]


def part(root, path: str):
    return reduce(getattr, path.split("."), root)


def written_by_hand(module, model_type: str, ids) -> tuple[list, list, np.ndarray, np.ndarray]:
    """(what each attention adds, what each MLP adds, the stream entering block 0, the stream
    leaving the last block), each (T, hidden) per layer, read by hooks on the family's modules."""
    blocks, attention, mlp, _ = PARTS[model_type]
    seen = {}

    def keep(name):
        def hook(_, args, out):
            seen[name] = (out[0] if isinstance(out, tuple) else out)[0].double().numpy()

        return hook

    handles = []
    layers = part(module, blocks)
    for n, block in enumerate(layers):
        after = AFTER.get(model_type)
        handles += [
            part(block, after[0] if after else attention).register_forward_hook(keep(("attn", n))),
            part(block, after[1] if after else mlp).register_forward_hook(keep(("mlp", n))),
        ]
    handles.append(layers[0].register_forward_pre_hook(lambda _, args: seen.update(first=args[0][0])))
    handles.append(layers[-1].register_forward_hook(keep("last")))
    try:
        with torch.no_grad():
            module(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    n = len(layers)
    first = seen["first"].double().numpy()
    return [seen["attn", i] for i in range(n)], [seen["mlp", i] for i in range(n)], first, seen["last"]


@pytest.mark.parametrize("position", [-1, 3])
def test_each_part_is_what_the_familys_modules_wrote_and_they_sum_to_the_final_stream(tiny, position):
    model, model_type, ids = tiny
    journey = stream_journey(model, ids, position)
    attn, mlp, first, last = written_by_hand(model.module, model_type, ids)
    layers = model.n_layers
    assert journey.names[:3] == ("embeddings", "L1 attn", "L1 MLP") and len(journey.names) == 1 + 2 * layers
    np.testing.assert_allclose(journey.parts[0], first[position], atol=1e-5)
    for n in range(layers):
        np.testing.assert_allclose(
            journey.parts[1 + 2 * n], attn[n][position], atol=1e-5, err_msg=f"L{n + 1}"
        )
        np.testing.assert_allclose(journey.parts[2 + 2 * n], mlp[n][position], atol=1e-5, err_msg=f"L{n + 1}")
    np.testing.assert_allclose(journey.final, last[position], atol=1e-5)
    assert journey.sum_error <= 1e-4 * np.abs(last[position]).max()
    rows = journey.rows
    assert rows[-1].cos_final == pytest.approx(1.0, abs=1e-9)
    assert rows[-1].norm_out == pytest.approx(float(np.linalg.norm(last[position])), rel=1e-5)
    assert rows[0].norm_in == pytest.approx(float(np.linalg.norm(first[position])), rel=1e-5)
    for n in range(layers):
        assert rows[n].attn_norm == pytest.approx(float(np.linalg.norm(attn[n][position])), rel=1e-5)
        assert rows[n].mlp_norm == pytest.approx(float(np.linalg.norm(mlp[n][position])), rel=1e-5)
    for n in range(1, layers):  # the stream entering a block is the one leaving the block before
        assert rows[n].norm_in == pytest.approx(rows[n - 1].norm_out, rel=1e-6)


def test_the_lens_beside_each_layer_is_the_logit_lens(tiny):
    model, _, ids = tiny
    journey = stream_journey(model, ids, 2)
    lens = logit_lens(model, ids)
    assert [row.lens_top for row in journey.rows] == lens.top_ids[:, 2].tolist()


def test_a_position_out_of_range_is_named():
    assert check_position(-1, 5) == 4 and check_position(0, 5) == 0
    with pytest.raises(ValueError, match="Position 5 does not exist: the text has positions 0 to 4"):
        check_position(5, 5)
    with pytest.raises(ValueError, match="Position -6 does not exist"):
        check_position(-6, 5)


def norm_seen(module, model_type: str, ids, layer: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(what the norm read, what it gave, the logits), each (T, …): the norm before block
    ``layer``'s attention, or the final norm (None), read by a hook on the family's module."""
    blocks, _, _, final = PARTS[model_type]
    norm = part(module, final) if layer is None else part(part(module, blocks)[layer], PRE[model_type])
    seen = {}
    handle = norm.register_forward_hook(lambda _, args, out: seen.update(x=args[0][0], y=out[0]))
    try:
        with torch.no_grad():
            logits = module(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    finally:
        handle.remove()
    return seen["x"].double().numpy(), seen["y"].double().numpy(), logits.double().numpy()


@pytest.mark.parametrize("where", ["first", "last", "final"])
def test_the_norm_written_out_is_the_familys_own_norm(tiny, where):
    model, model_type, ids = tiny
    layers = model.n_layers
    layer = {"first": 0, "last": layers - 1, "final": layers}[where]
    step = norm_step(model, ids, 3, layer)
    x, y, logits = norm_seen(model.module, model_type, ids, None if where == "final" else layer)
    np.testing.assert_allclose(step.stream, x[3], atol=1e-5)
    np.testing.assert_allclose(step.output, y[3], atol=1e-4 * np.abs(y[3]).max())
    centred = x[3] - x[3].mean() if model_type in ("gpt2", "gpt_neox") else x[3]
    assert step.kind == ("LayerNorm" if model_type in ("gpt2", "gpt_neox") else "RMSNorm")
    assert step.mean_square == pytest.approx(float((centred**2).mean()), rel=1e-5)
    by_hand = step.gain * centred / np.sqrt((centred**2).mean() + step.eps)
    np.testing.assert_allclose(
        by_hand + (0 if step.bias is None else step.bias), y[3], atol=1e-4 * np.abs(y[3]).max()
    )
    assert step.module_error <= 1e-4 * np.abs(y[3]).max()
    adapter = adapter_of(model.module)  # the same module, read at SCALED × the stream
    norm = adapter.final_norm if where == "final" else adapter.pre_norm(layer)
    with torch.no_grad():
        again = norm(torch.tensor(SCALED * x[3], dtype=torch.float32)[None])[0].double().numpy()
    assert step.scaled_change == pytest.approx(float(np.abs(again - y[3]).max()), abs=1e-5)
    assert step.scaled_change <= 1e-3 * np.abs(y[3]).max()  # scaling the stream changes nothing read
    if where == "final":
        best = np.argsort(-logits[3])[:5]
        assert [t for t, _ in step.top] == best.tolist()
        np.testing.assert_allclose([v for _, v in step.top], logits[3][best], rtol=1e-5)
    else:
        assert step.top == ()


def test_a_layer_past_the_final_norm_is_named(tiny):
    model, _, ids = tiny
    with pytest.raises(ValueError, match=f"Layer {model.n_layers + 2} does not exist"):
        norm_step(model, ids, 0, model.n_layers + 1)


def test_the_parts_direct_effects_add_up_to_the_models_logits(tiny):
    """Each part through the final norm, its scale frozen at the final stream's, written out here
    from the family's norm weights; their sum is transformers' logits (Gemma 2: before its cap)."""
    model, model_type, ids = tiny
    journey = stream_journey(model, ids, 4)
    with torch.no_grad():
        logits = model.module(input_ids=torch.tensor([ids]), use_cache=False).logits[0, 4].double().numpy()
    tokens = [*np.argsort(-logits)[:3].tolist(), 7]
    effects = direct_effects(model, journey, tokens)
    assert effects.names[-1] == "biases" and effects.values.shape == (len(journey.names) + 1, 4)
    total = effects.values.sum(0)
    cap = getattr(model.module.config, "final_logit_softcapping", None)
    if cap:
        assert "caps its logits" in effects.note
        total = np.tanh(total / cap) * cap
    np.testing.assert_allclose(total, logits[tokens], atol=1e-4 * np.abs(logits).max())
    norm = part(model.module, PARTS[model_type][3])
    gain = norm.weight.detach().double().numpy() + (1.0 if model_type.startswith("gemma") else 0.0)
    layer_norm = model_type in ("gpt2", "gpt_neox")
    final, mlp = journey.final, journey.parts[2]  # L1 MLP
    if layer_norm:
        final, mlp = final - final.mean(), mlp - mlp.mean()
    unembed = model.module.get_output_embeddings().weight.detach().double().numpy()[tokens]
    eps = norm.eps if layer_norm else model.module.config.rms_norm_eps
    by_hand = (gain * mlp / np.sqrt((final**2).mean() + eps)) @ unembed.T
    np.testing.assert_allclose(effects.values[2], by_hand, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("by", ["part", "layer", "kind"])
def test_grouped_parts_add_up_as_the_parts_do(tiny, by):
    """A group's direct effect is its parts' effects summed; its norm is that of its parts' summed
    vectors (checked against the parts named here); every grouping adds up to the same logits."""
    model, _, ids = tiny
    journey = stream_journey(model, ids)
    effects = direct_effects(model, journey)
    groups = grouped(journey, effects, by)
    n = model.n_layers
    expected = {
        "part": list(journey.names),
        "layer": ["embeddings", *(f"L{k + 1}" for k in range(n))],
        "kind": ["embeddings", "attention", "MLPs"],
    }[by]
    assert list(groups.names) == [*expected, "biases"]
    np.testing.assert_allclose(groups.values.sum(0), effects.values.sum(0), rtol=1e-10, atol=1e-10)
    members = {
        "part": [1],
        "layer": [2 * n - 1, 2 * n],  # the last block: its attention and its MLP
        "kind": list(range(2, 2 * n + 1, 2)),  # every MLP
    }[by]
    row = {"part": 1, "layer": n, "kind": 2}[by]
    np.testing.assert_allclose(groups.values[row], effects.values[members].sum(0), rtol=1e-12)
    assert groups.norms[row] == pytest.approx(np.linalg.norm(journey.parts[members].sum(0)))
    assert np.isnan(groups.norms[-1])
    with pytest.raises(ValueError, match="Unknown grouping"):
        grouped(journey, effects, "head")
