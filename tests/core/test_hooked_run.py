"""The one hooked run (core.decoder.run) on a tiny random model of every supported family: each site
against transformers' own eager run read by hooks written here, edits against hand-written hooks,
gradients against autograd through those hooks, and a model left as it was."""

import sys
import threading
from contextlib import ExitStack, contextmanager
from functools import reduce

import numpy as np
import pytest

from core import models
from core.decoder.adapter import adapter_of
from core.decoder.run import SITES, Edit, hooked_run, prefix
from core.decoder.sites import BESIDE
from tests.sums import assert_adds_up
from tests.tiny_models import (
    AFTER_NORMS,
    FAMILY_TYPES,
    MLP_READS,
    PARTS,
    head_zeroed_by_hand,
    save_tiny_decoder,
)
from tests.waits import patience

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
TEXT = "the cat sat on the mat because it was warm"
CLOSE = 1e-5  # two runs of the same weights by the same kernels: float32 rounding at most


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    """(loaded model, transformers' own copy of it in eager mode, model_type, token ids)."""
    from transformers import AutoModelForCausalLM

    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    reference = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    model = models.load_model(folder)
    return model, reference, request.param, model.tokenizer(TEXT)["input_ids"]


def part(root, path: str):
    return reduce(getattr, path.split("."), root)


@contextmanager
def read_by_hand(module, model_type: str):
    """While inside, ``module``'s forward passes fill the yielded dict: (site, layer) -> the live
    tensor, read by hooks on the family's own modules and by wrapping its eager attention."""
    blocks, attention, mlp, norm = PARTS[model_type]
    seen = {}

    def keep(site, layer, output=True):
        def hook(_, args, out=None, kwargs=None):
            if output:
                seen[site, layer] = out[0] if isinstance(out, tuple) else out
            else:
                seen[site, layer] = args[0]

        return hook

    def rotation(layer):
        def hook(_, args, kwargs):
            if kwargs.get("position_embeddings") is not None:
                seen["rotary", layer] = torch.stack(kwargs["position_embeddings"])

        return hook

    with ExitStack() as stack:
        for layer, block in enumerate(part(module, blocks)):
            hooks = [
                part(block, attention).register_forward_pre_hook(rotation(layer), with_kwargs=True),
                block.register_forward_pre_hook(keep("resid_pre", layer, output=False)),
                block.register_forward_hook(keep("resid_post", layer)),
                part(block, attention).register_forward_hook(keep("attn_raw", layer)),
                part(block, mlp).register_forward_hook(keep("mlp_raw", layer)),
            ]
            mid, down = MLP_READS[model_type]
            hooks.append(part(block, down).register_forward_pre_hook(keep("mlp_post", layer, output=False)))
            if mid is not None:
                hooks.append(
                    part(block, mid).register_forward_pre_hook(keep("resid_mid", layer, output=False))
                )
            written = [part(block, name) for name in AFTER_NORMS.get(model_type, (attention, mlp))]
            hooks += [written[0].register_forward_hook(keep("attn_out", layer))]
            hooks += [written[1].register_forward_hook(keep("mlp_out", layer))]
            for handle in hooks:
                stack.callback(handle.remove)
        handle = part(module, norm).register_forward_pre_hook(keep("final_in", None, output=False))
        stack.callback(handle.remove)
        family = sys.modules[type(part(part(module, blocks)[0], attention)).__module__]
        eager = family.eager_attention_forward

        def recording(attn, query, key, value, mask, **kwargs):
            out, weights = eager(attn, query, key, value, mask, **kwargs)
            n = attn.layer_idx
            seen.update(
                {("q", n): query, ("k", n): key, ("v", n): value, ("pattern", n): weights, ("z", n): out}
            )
            return out, weights

        family.eager_attention_forward = recording
        stack.callback(setattr, family, "eager_attention_forward", eager)
        yield seen


def reference_run(reference, model_type, ids, metric=None):
    """(every site read by hand, its logits; with ``metric``, the gradient at every site too)."""
    with torch.enable_grad() if metric else torch.no_grad(), read_by_hand(reference, model_type) as seen:
        logits = reference(input_ids=torch.tensor([ids]), use_cache=False).logits
    seen["logits", None] = logits
    grads = {}
    if metric is not None:
        keys = [key for key in seen if key[0] != "rotary"]  # computed from positions: no gradient
        grads = dict(zip(keys, torch.autograd.grad(metric(logits), [seen[k] for k in keys]), strict=True))
    return {k: as_site(k, v.detach()) for k, v in seen.items()}, {k: as_site(k, g) for k, g in grads.items()}


def as_site(key, x):
    """The attention's own (batch, heads, T, d) q, k and v as the run's sites are: (batch, T, heads, d)."""
    return x.transpose(1, 2) if key[0] in ("q", "k", "v") else x


def logits_with(reference, model_type, ids, handle):
    """transformers' own logits with the hook ``handle`` registered, which is removed after."""
    try:
        return reference_run(reference, model_type, ids)[0]["logits", None]
    finally:
        handle.remove()


def hooks_on(module) -> list:
    """Every forward and pre-forward hook on ``module`` and its parts (transformers has its own)."""
    return [
        (name, tuple(m._forward_hooks), tuple(m._forward_pre_hooks)) for name, m in module.named_modules()
    ]


def sites_of(model_type: str) -> list[str]:
    """Every site read by hand; GPT-2's positions are a learned table, so it has no rotary site, and
    GPT-NeoX's MLP reads the block's input, so it has no resid_mid. (Each head's result, the
    scores and the norms' scales are tested against the output projection, the pattern and the
    config's eps below.)"""
    absent = {"gpt2": "rotary", "gpt_neox": "resid_mid"}.get(model_type)
    return [site for site in SITES if site not in (absent, "result", *BESIDE)]


def test_every_site_is_what_transformers_own_run_holds_there(tiny):
    model, reference, model_type, ids = tiny
    expected, _ = reference_run(reference, model_type, ids)
    before = hooks_on(model.module)
    out = hooked_run(model, ids, cache=sites_of(model_type))
    layers = model.n_layers
    assert set(out.cache) == set(expected)
    assert len(out.cache) == (len(sites_of(model_type)) - 2) * layers + 2
    for key, value in expected.items():
        np.testing.assert_allclose(out.cache[key].numpy(), value.numpy(), atol=CLOSE, err_msg=str(key))
    np.testing.assert_allclose(out.logits.numpy(), expected["logits", None].numpy(), atol=CLOSE)
    assert hooks_on(model.module) == before and out.grads == {} and out.metric is None


def test_the_parts_written_to_the_stream_add_up_to_it(tiny):
    """resid_pre + attn_out + mlp_out = resid_post in every family, Gemma's normalised parts too."""
    model, _, _, ids = tiny
    out = hooked_run(model, ids, cache=["resid_pre", "attn_out", "mlp_out", "resid_post"])
    for layer in range(model.n_layers):
        parts = [out.cache[site, layer].numpy() for site in ("resid_pre", "attn_out", "mlp_out")]
        assert_adds_up(parts, out.cache["resid_post", layer].numpy())


def test_the_stream_between_attention_and_the_mlp_adds_up(tiny):
    """resid_mid = resid_pre + attn_out, and resid_post = resid_mid + mlp_out; read only."""
    model, _, model_type, ids = tiny
    if model_type == "gpt_neox":
        with pytest.raises(ValueError, match="no resid_mid: its MLP reads the block's input"):
            hooked_run(model, ids, cache=["resid_mid"])
        return
    out = hooked_run(model, ids, cache=["resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post"])
    for layer in range(model.n_layers):
        at = {site: out.cache[site, layer].numpy() for site, n in out.cache if n == layer}
        assert_adds_up([at["resid_pre"], at["attn_out"]], at["resid_mid"])
        assert_adds_up([at["resid_mid"], at["mlp_out"]], at["resid_post"])
    with pytest.raises(ValueError, match="resid_mid can be read, not changed: change attn_out"):
        hooked_run(model, ids, edits=[Edit("resid_mid", 0, "zero")])


def test_each_heads_result_is_its_slice_of_the_output_projection(tiny):
    """result[..., h, :] = z_h · W_O[h]ᵀ; summed with the bias it is attention's own output, and an
    edit of one head's result is the same edit of its z (the output projection is linear)."""
    model, _, _, ids = tiny
    adapter = adapter_of(model.module)
    shape = adapter.shape
    out = hooked_run(model, ids, cache=["z", "result", "attn_raw"])
    weight = adapter.out_weight(1).detach().double().reshape(shape.hidden, shape.heads, shape.head_dim)
    by_hand = torch.einsum("bthd,nhd->bthn", out.cache["z", 1].double(), weight)
    np.testing.assert_allclose(out.cache["result", 1].numpy(), by_hand.numpy(), atol=CLOSE)
    bias = getattr(adapter.out_proj(1), "bias", None)
    whole = [*np.moveaxis(by_hand.numpy(), 2, 0), *([] if bias is None else [bias.detach().numpy()])]
    assert_adds_up(np.broadcast_arrays(*whole), out.cache["attn_raw", 1].numpy())
    head = shape.heads - 1
    zeroed = hooked_run(model, ids, edits=[Edit("result", 1, "zero", heads=head, positions=[2])]).logits
    z_zeroed = hooked_run(model, ids, edits=[Edit("z", 1, "zero", heads=head, positions=[2])]).logits
    np.testing.assert_allclose(zeroed.numpy(), z_zeroed.numpy(), atol=CLOSE)
    assert (zeroed - out.logits).abs().max() > 1e-4


def test_the_scores_are_what_the_softmax_turns_into_the_pattern(tiny):
    """softmax(scores) is transformers' own pattern (capped and windowed where the family does),
    the masked cells are −∞, and the scores are read only."""
    model, _, _, ids = tiny
    out = hooked_run(model, ids, cache=["scores", "pattern"])
    for layer in range(model.n_layers):
        scores = out.cache["scores", layer]
        assert scores.shape == out.cache["pattern", layer].shape
        np.testing.assert_allclose(
            torch.softmax(scores, -1).numpy(), out.cache["pattern", layer].numpy(), atol=CLOSE
        )
        above = torch.ones(len(ids), len(ids), dtype=torch.bool).triu(1)  # later tokens: masked
        assert torch.isneginf(scores[..., above]).all() and torch.isfinite(scores[..., ~above]).any()
    with pytest.raises(ValueError, match="scores can be read, not changed: change the pattern"):
        hooked_run(model, ids, edits=[Edit("scores", 0, "zero")])
    with pytest.raises(ValueError, match="scores: read beside the run, with no gradient"):
        hooked_run(model, ids, grads=["scores"], metric=lambda logits: logits[0, -1, 0])


def test_each_norms_scale_is_the_root_mean_square_of_what_it_reads(tiny):
    """ln1_scale, ln2_scale and final_scale are √(mean square + eps) of the norm's input (its
    variance for a LayerNorm), eps from the model's config; read only."""
    model, _, model_type, ids = tiny
    config = model.module.config
    eps = next(
        getattr(config, n)
        for n in ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon")
        if hasattr(config, n)
    )
    mid = "resid_pre" if model_type == "gpt_neox" else "resid_mid"  # what the MLP's norm reads
    out = hooked_run(
        model, ids, cache=["resid_pre", mid, "ln1_scale", "ln2_scale", "final_in", "final_scale"]
    )
    pairs = [(("final_in", None), ("final_scale", None))]
    pairs += [(("resid_pre", n), ("ln1_scale", n)) for n in range(model.n_layers)]
    pairs += [((mid, n), ("ln2_scale", n)) for n in range(model.n_layers)]
    for read, scale in pairs:
        x = out.cache[read].double()
        x = x - x.mean(-1, keepdim=True) if model_type in ("gpt2", "gpt_neox") else x  # LayerNorms
        expected = (x.pow(2).mean(-1, keepdim=True) + eps).sqrt()
        np.testing.assert_allclose(out.cache[scale].numpy(), expected.numpy(), rtol=1e-5, err_msg=str(scale))
    with pytest.raises(ValueError, match="ln1_scale can be read, not changed"):
        hooked_run(model, ids, edits=[Edit("ln1_scale", 0, "zero")])
    with pytest.raises(ValueError, match="final_scale: read beside the run, with no gradient"):
        hooked_run(model, ids, grads=["final_scale"], metric=lambda logits: logits[0, -1, 0])


def test_zeroing_a_neuron_equals_a_hand_hook_on_the_mlps_last_projection(tiny):
    model, reference, model_type, ids = tiny
    width = hooked_run(model, ids, cache=[("mlp_post", 0)]).cache["mlp_post", 0].shape[-1]
    neuron = torch.arange(width) == 3  # neuron 3 at every position
    out = hooked_run(model, ids, edits=[Edit("mlp_post", 0, "zero", where=neuron)])
    down = part(part(reference, PARTS[model_type][0])[0], MLP_READS[model_type][1])

    def zero(_, args):
        x = args[0].clone()
        x[..., 3] = 0
        return (x, *args[1:])

    expected = logits_with(reference, model_type, ids, down.register_forward_pre_hook(zero))
    np.testing.assert_allclose(out.logits.numpy(), expected.numpy(), atol=CLOSE)
    assert (out.logits - hooked_run(model, ids).logits).abs().max() > 1e-5


def test_a_cached_tensor_takes_part_in_ones_own_gradients(tiny):
    """The cache holds ordinary tensors, not inference ones: autograd may save them for backward."""
    model, _, _, ids = tiny
    out = hooked_run(model, ids, cache=[("resid_post", 0), ("pattern", 1)])
    stream, weights = out.cache["resid_post", 0], out.cache["pattern", 1]
    assert not stream.is_inference() and not stream.requires_grad
    probe = torch.ones(stream.shape[-1], requires_grad=True)
    (stream @ probe).pow(2).sum().backward()
    expected = 2 * torch.einsum("btd,bt->d", stream, stream @ probe.detach())
    np.testing.assert_allclose(probe.grad.numpy(), expected.numpy(), rtol=1e-5)
    assert not weights.is_inference()


def test_an_add_equals_a_hook_that_adds_by_hand(tiny):
    model, reference, model_type, ids = tiny
    vector = torch.randn(model.module.config.hidden_size, generator=torch.Generator().manual_seed(0))
    out = hooked_run(model, ids, edits=[Edit("resid_post", 0, "add", vector, positions=[2, 4])])
    block = part(reference, PARTS[model_type][0])[0]

    def add(_, __, output):
        hidden = (output[0] if isinstance(output, tuple) else output).clone()
        hidden[:, [2, 4]] += vector
        return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

    expected = logits_with(reference, model_type, ids, block.register_forward_hook(add))
    np.testing.assert_allclose(out.logits.numpy(), expected.numpy(), atol=CLOSE)
    clean = hooked_run(model, ids).logits
    assert (out.logits - clean).abs().max() > 1e-3  # the vector did change the prediction


def test_zeroing_a_heads_output_equals_zeroing_its_slice_of_the_output_projection(tiny):
    model, reference, _, ids = tiny
    layer, head = 1, model.n_heads - 1
    out = hooked_run(model, ids, edits=[Edit("z", layer, "zero", heads=head, positions=[3, 5])])
    with head_zeroed_by_hand(reference, layer, head, [3, 5]), torch.no_grad():
        expected = reference(input_ids=torch.tensor([ids]), use_cache=False).logits
    np.testing.assert_allclose(out.logits.numpy(), expected.numpy(), atol=CLOSE)


def test_replacing_every_site_by_its_own_value_changes_nothing(tiny):
    model, _, model_type, ids = tiny
    base = hooked_run(model, ids, cache=[site for site in sites_of(model_type) if site != "resid_mid"])
    again = hooked_run(model, ids, edits=[Edit(s, n, "replace", v) for (s, n), v in base.cache.items()])
    np.testing.assert_allclose(again.logits.numpy(), base.logits.numpy(), atol=CLOSE)
    earlier = base.cache["resid_pre", 0]  # another layer's stream does change it
    moved = hooked_run(model, ids, edits=[Edit("resid_pre", model.n_layers - 1, "replace", earlier)])
    assert (moved.logits - base.logits).abs().max() > 1e-3


def test_an_edited_pattern_gives_the_heads_output_again(tiny):
    """Every query of head 0 looking only at the first token: its output at each position is the
    first token's value, through the head's own group."""
    model, _, _, ids = tiny
    first = torch.zeros(len(ids), len(ids))
    first[:, 0] = 1
    out = hooked_run(
        model, ids, cache=[("v", 1), ("z", 1)], edits=[Edit("pattern", 1, "replace", first, heads=0)]
    )
    value = out.cache["v", 1][0, 0, 0]  # the first key/value head's value at the first token
    np.testing.assert_allclose(
        out.cache["z", 1][0, :, 0].numpy(), np.tile(value.numpy(), (len(ids), 1)), atol=CLOSE
    )


def test_gradients_at_every_site_equal_autograd_through_hand_hooks(tiny):
    model, reference, model_type, ids = tiny

    def metric(logits):
        return logits[0, -1, 5] - logits[0, -1, 7]

    _, expected = reference_run(reference, model_type, ids, metric)
    before = hooks_on(model.module)
    sites = [site for site in sites_of(model_type) if site != "rotary"]  # no gradient at rotary
    out = hooked_run(model, ids, grads=sites, metric=metric)
    assert set(out.grads) == set(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(out.grads[key].numpy(), value.numpy(), atol=1e-4, err_msg=str(key))
    assert out.metric == pytest.approx(float(metric(out.logits)), abs=CLOSE)
    assert out.grads["resid_post", 0].abs().max() > 0
    assert hooks_on(model.module) == before


def test_rows_of_a_batch_carry_their_own_edits(tiny):
    model, _, _, ids = tiny
    edit = Edit("attn_out", 0, "scale", 0.5, positions=1)
    batch = hooked_run(model, [ids, ids], edits=[Edit("attn_out", 0, "scale", 0.5, positions=1, row=1)])
    np.testing.assert_allclose(batch.logits[0].numpy(), hooked_run(model, ids).logits[0].numpy(), atol=CLOSE)
    np.testing.assert_allclose(
        batch.logits[1].numpy(), hooked_run(model, ids, edits=[edit]).logits[0].numpy(), atol=CLOSE
    )


def test_an_error_inside_leaves_the_model_as_it_was(tiny):
    model, _, _, ids = tiny
    clean = hooked_run(model, ids).logits
    before = hooks_on(model.module)

    def broken(logits):
        raise RuntimeError("the metric failed")

    with pytest.raises(RuntimeError, match="the metric failed"):
        hooked_run(model, ids, edits=[Edit("resid_pre", 0, "zero")], grads=["z"], metric=broken)
    assert hooks_on(model.module) == before
    np.testing.assert_allclose(hooked_run(model, ids).logits.numpy(), clean.numpy(), atol=0)


def test_another_thread_sees_the_model_intact_during_a_run(tiny):
    model, _, _, ids = tiny
    clean = hooked_run(model, ids).logits
    seen = {}

    def metric(logits):  # runs while the hooks are in place
        def other():
            with torch.no_grad():
                seen["logits"] = model.module(input_ids=torch.tensor([ids]), use_cache=False).logits

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(patience(60))
        return logits[0, -1, 0]

    knocked = hooked_run(model, ids, edits=[Edit("z", 0, "zero")], metric=metric)
    assert (knocked.logits - clean).abs().max() > 1e-3
    np.testing.assert_allclose(seen["logits"].numpy(), clean.numpy(), atol=CLOSE)


def test_what_does_not_exist_is_named(tiny):
    model, _, _, ids = tiny
    before = hooks_on(model.module)
    last = model.n_layers - 1
    wrong = [
        ({"cache": ["resid"]}, "There is no site 'resid'; the sites are resid_pre, attn_out"),
        ({"cache": [("z", last + 1)]}, f"Layer {last + 1} of z does not exist: .* layers 0 to {last}"),
        ({"cache": [("logits", 0)]}, "logits has no layer"),
        ({"edits": [Edit("z", 0, "zero", heads=model.n_heads)]}, f"Heads \\[{model.n_heads}\\] do not exist"),
        (
            {"edits": [Edit("k", 0, "zero", heads=model.n_kv_heads)]},
            f"Key/value heads of k .*{model.n_heads} query heads.* there are {model.n_kv_heads}",
        ),
        ({"edits": [Edit("resid_pre", 0, "zero", positions=[len(ids)])]}, "Positions .* do not exist"),
        ({"edits": [Edit("resid_pre", 0, "zero", heads=0)]}, "resid_pre is not per head"),
        ({"edits": [Edit("resid_pre", 0, "double", 2)]}, "no operation 'double'; the operations are"),
        ({"edits": [Edit("resid_pre", 0, "add")]}, "add needs a value"),
        ({"edits": [Edit("resid_pre", 0, "zero", row=1)]}, "Rows \\[1\\] do not exist"),
        ({"edits": [Edit("rotary", 0, "zero", row=0)]}, "rotary is the same for every row: give no row"),
        ({"grads": ["z"]}, "Gradients need a metric"),
        ({"grads": ["rotary"], "metric": lambda logits: logits[0, -1, 0]}, "rotary site has no gradient"),
        ({"grads": ["z"], "metric": lambda logits: logits[0, -1]}, "must give one number; it gave shape"),
    ]
    for arguments, message in wrong:
        with pytest.raises(ValueError, match=message):
            hooked_run(model, ids, **arguments)
        assert hooks_on(model.module) == before, arguments
    with pytest.raises(ValueError, match="Token ids must be"):
        hooked_run(model, [])
    if model.family == "GPT-2":
        with pytest.raises(ValueError, match="GPT-2 has no rotary site"):
            hooked_run(model, ids, cache=["rotary"])


def test_a_changed_rotation_moves_the_tokens(tiny):
    """Rotating every query and key as if at position 0 is what a model without positions sees:
    the last token then scores its keys by content alone, so the logits change."""
    model, _, model_type, ids = tiny
    if model_type == "gpt2":
        pytest.skip("GPT-2 learns its positions")
    base = hooked_run(model, ids, cache=[("rotary", 0)])
    first = base.cache["rotary", 0][:, :, :1]  # (2, 1, 1, dims): position 0's cos and sin
    still = hooked_run(model, ids, edits=[Edit("rotary", n, "replace", first) for n in range(model.n_layers)])
    assert (still.logits - base.logits).abs().max() > 1e-3
    np.testing.assert_allclose(still.logits[0, 0].numpy(), base.logits[0, 0].numpy(), atol=CLOSE)


def test_without_the_unembedding_the_sites_are_the_same_and_there_are_no_logits(tiny):
    model, _, _, ids = tiny
    whole = hooked_run(model, ids, cache=["resid_post", "z", "final_in"])
    body = hooked_run(model, ids, cache=["resid_post", "z", "final_in"], unembed=False)
    assert body.logits is None and set(body.cache) == set(whole.cache)
    for key, value in whole.cache.items():
        np.testing.assert_allclose(body.cache[key].numpy(), value.numpy(), atol=CLOSE, err_msg=str(key))
    with pytest.raises(ValueError, match="Without the unembedding there are no logits"):
        hooked_run(model, ids, unembed=False, cache=["logits"])
    adapter = adapter_of(model.module)
    with torch.inference_mode():
        normed = adapter.final_norm(whole.cache["final_in", None])
        logits = adapter.logits_of(body.normed)
    np.testing.assert_allclose(body.normed.numpy(), normed.numpy(), atol=CLOSE)
    np.testing.assert_allclose(logits.numpy(), whole.logits.numpy(), atol=1e-4)


def test_a_metric_of_the_normed_stream_has_the_gradients_of_the_same_metric_of_the_logits(tiny):
    model, _, _, ids = tiny
    adapter = adapter_of(model.module)
    body = hooked_run(model, ids, grads=["z"], metric=lambda h: adapter.logits_of(h)[0, -1, 5], unembed=False)
    whole = hooked_run(model, ids, grads=["z"], metric=lambda logits: logits[0, -1, 5])
    assert body.metric == pytest.approx(whole.metric, abs=1e-4)
    for key, value in whole.grads.items():
        np.testing.assert_allclose(body.grads[key].numpy(), value.numpy(), atol=1e-5, err_msg=str(key))


def test_a_fanned_out_sweep_equals_each_row_run_alone(tiny):
    """Rows from block 1 on, each with a head of layer 1 replaced by another run's at one position
    (a ``where`` mask), give what each edit gives in a run of its own."""
    model, _, _, ids = tiny
    other = hooked_run(model, ids[::-1], cache=[("z", 1)]).cache["z", 1]
    rows = [(0, 2), (1, 4), (model.n_heads - 1, len(ids) - 1)]  # (head, position) per row
    where = torch.zeros(len(rows), len(ids), model.n_heads, 1, dtype=torch.bool)
    for row, (head, position) in enumerate(rows):
        where[row, position, head] = True
    before = hooks_on(model.module)
    swept = hooked_run(
        model, ids, edits=[Edit("z", 1, "replace", other, where=where)], fan_out=(1, len(rows))
    )
    for row, (head, position) in enumerate(rows):
        alone = hooked_run(model, ids, edits=[Edit("z", 1, "replace", other, heads=head, positions=position)])
        np.testing.assert_allclose(swept.logits[row].numpy(), alone.logits[0].numpy(), atol=CLOSE)
    assert hooks_on(model.module) == before
    with pytest.raises(ValueError, match="Rows \\[1\\] do not exist"):  # below the fan-out, one row
        hooked_run(model, ids, edits=[Edit("z", 0, "zero", row=1)], fan_out=(1, 3))
    with pytest.raises(ValueError, match="A fan-out takes a batch of one"):
        hooked_run(model, [ids, ids], fan_out=(1, 3))


def test_a_fan_out_in_stages_equals_each_row_run_alone(tiny):
    """Row 0 unedited, row 1 joining at block 0 and row 2 at block 1, after a cached beginning:
    each row gives what its edit gives in a run of its own; stages that do not grow are refused."""
    model, _, _, ids = tiny
    n = 3
    other = hooked_run(model, ids[::-1], cache=[("z", 0), ("z", 1)]).cache
    rows = {1: ("z", 0, 1, 4), 2: ("z", 1, model.n_heads - 1, len(ids) - 1)}  # row: (site, layer, head, pos)
    edits = []
    for row, (site, layer, head, position) in rows.items():
        where = torch.zeros(row + 1, len(ids) - n, model.n_heads, 1, dtype=torch.bool)
        where[row, position - n, head] = True
        edits.append(Edit(site, layer, "replace", other[site, layer][:, n:], where=where))
    swept = hooked_run(model, ids[n:], edits=edits, fan_out=[(0, 2), (1, 3)], past=prefix(model, ids[:n]))
    plain = hooked_run(model, ids)
    np.testing.assert_allclose(swept.logits[0].numpy(), plain.logits[0, n:].numpy(), atol=1e-4)
    for row, (site, layer, head, position) in rows.items():
        edit = Edit(site, layer, "replace", other[site, layer], heads=head, positions=position)
        alone = hooked_run(model, ids, edits=[edit])
        np.testing.assert_allclose(swept.logits[row].numpy(), alone.logits[0, n:].numpy(), atol=1e-4)
    for bad in ([(0, 2), (1, 2)], [(1, 2), (0, 3)], [(0, 2), (0, 3)]):
        with pytest.raises(ValueError, match="A fan-out takes a batch of one"):
            hooked_run(model, ids, fan_out=bad)
    with pytest.raises(ValueError, match="Rows \\[2\\] do not exist"):  # row 2 joins at block 1
        hooked_run(model, ids, edits=[Edit("z", 0, "zero", row=2)], fan_out=[(0, 2), (1, 3)])


def test_a_run_after_a_cached_beginning_equals_the_whole_run(tiny):
    model, _, _, ids = tiny
    whole = hooked_run(model, ids, cache=[("q", 1), ("k", 1)])
    n = 4
    past = prefix(model, ids[:n])
    rest = hooked_run(model, ids[n:], cache=[("q", 1), ("k", 1)], past=past, fan_out=(1, 2))
    for row in range(2):
        np.testing.assert_allclose(rest.logits[row].numpy(), whole.logits[0, n:].numpy(), atol=1e-4)
    np.testing.assert_allclose(rest.cache["q", 1][:1].numpy(), whole.cache["q", 1][:, n:].numpy(), atol=1e-4)
    np.testing.assert_allclose(rest.cache["k", 1][:1].numpy(), whole.cache["k", 1].numpy(), atol=1e-4)
    again = hooked_run(model, ids[n:], past=past)  # the cache given is copied, not extended
    np.testing.assert_allclose(again.logits[0].numpy(), whole.logits[0, n:].numpy(), atol=1e-4)
    with pytest.raises(ValueError, match=r"Positions .* do not exist"):
        hooked_run(model, ids[n:], past=past, edits=[Edit("q", 0, "zero", positions=len(ids))])
    for site in ("q", "z", "resid_post"):  # positions count from the start of the text
        edit = Edit(site, 0, "zero", positions=[n + 1, len(ids) - 1])
        later = hooked_run(model, ids[n:], past=past, edits=[edit]).logits
        np.testing.assert_allclose(
            later[0].numpy(), hooked_run(model, ids, edits=[edit]).logits[0, n:].numpy(), atol=1e-4
        )


def test_a_grown_past_is_a_decode_step(tiny):
    """A prefill kept and then grown by one token gives the whole run's last logits and weights;
    last_logits keeps only the last position's."""
    model, _, _, ids = tiny
    first = hooked_run(model, ids[:-1], keep_past=True, last_logits=True)
    assert first.logits.shape[:2] == (1, 1) and first.past.get_seq_length() == len(ids) - 1
    step = hooked_run(
        model, ids[-1:], cache=["pattern"], past=first.past, grow_past=True, keep_past=True, last_logits=True
    )
    whole = hooked_run(model, ids, cache=["pattern"])
    assert first.past.get_seq_length() == len(ids)  # grown in place
    np.testing.assert_allclose(step.logits[0, -1].numpy(), whole.logits[0, -1].numpy(), atol=1e-4)
    np.testing.assert_allclose(
        step.cache["pattern", 1][0, :, -1].numpy(), whole.cache["pattern", 1][0, :, -1].numpy(), atol=1e-5
    )
    with pytest.raises(ValueError, match="grow_past grows a past cache"):
        hooked_run(model, ids, grow_past=True)
    with pytest.raises(ValueError, match="With last_logits the logits site is not run"):
        hooked_run(model, ids, cache=["logits"], last_logits=True)


def test_retain_keeps_the_graph_for_gradients_of_ones_own(tiny):
    model, _, _, ids = tiny

    def metric(logits):
        return logits[0, -1, 5]

    out = hooked_run(model, ids, cache=[("k", 1)], grads=[("pattern", 1)], metric=metric, retain=True)
    (through,) = torch.autograd.grad(out.live["pattern", 1], out.live["k", 1], out.grads["pattern", 1])
    direct = hooked_run(model, ids, grads=[("k", 1)], metric=metric).grads["k", 1]
    np.testing.assert_allclose(through.numpy(), direct.numpy(), atol=1e-5)


def test_another_runs_cache_can_be_an_edits_value_in_a_run_with_gradients(tiny):
    model, _, _, ids = tiny
    cached = hooked_run(model, ids, cache=[("resid_post", 0)]).cache["resid_post", 0]
    edits = [Edit("resid_post", 0, "scale", cached), Edit("resid_post", 0, "add", cached)]
    out = hooked_run(
        model, ids, edits=edits, grads=[("resid_pre", 0)], metric=lambda logits: logits[0, -1, 3]
    )
    assert out.grads["resid_pre", 0].shape == cached.shape and out.grads["resid_pre", 0].abs().max() > 0
