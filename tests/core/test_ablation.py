"""Head ablation and the ablation ranking on a tiny random Llama with grouped-query attention."""

import re
from types import SimpleNamespace

import numpy as np
import pytest

from core.decoder.run import cache_keywords, hooked_run
from core.interp.ablation import ablated, check_heads, head_means, head_outputs, knockout, run, shape_of
from core.interp.ranking import (
    AnswerToken,
    answer_token,
    rank_by_ablation,
    rank_by_attention,
)
from tests.tiny_models import LLAMA_PROMPT as PROMPT
from tests.waits import patience

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

# Two runs of the same clean model may take other float32 kernels (another thread, another batch
# size): their logits then differ by a few float32 ulps. A hook left behind changes them by
# far more (a knocked-out head moves them by over 1e-4).
SAME_RUN = 1e-5


def rms_norm(x, weight, eps):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * weight


def rotate(x, theta):
    """RoPE on (T, d) vectors at positions 0…T−1, pairs (i, i + d/2)."""
    t, d = x.shape
    inv_freq = 1.0 / theta ** (np.arange(0, d, 2) / d)
    angles = np.outer(np.arange(t), inv_freq)
    cos, sin = np.cos(np.concatenate([angles, angles], -1)), np.sin(np.concatenate([angles, angles], -1))
    half = np.concatenate([-x[:, d // 2 :], x[:, : d // 2]], -1)
    return x * cos + half * sin


def reference_layer(module, layer, x, zero_head=None, first=False):
    """One Llama decoder layer written out in NumPy; ``zero_head``'s slice of the o_proj input is 0
    at every position but the first (at the first too with ``first``).

    ``x`` (T, hidden) is the layer's input. Returns its output (T, hidden).
    """
    cfg = module.config
    block = module.model.layers[layer]
    w = {k: v.detach().double().numpy() for k, v in block.state_dict().items()}
    d = cfg.hidden_size // cfg.num_attention_heads
    group = cfg.num_attention_heads // cfg.num_key_value_heads
    shape = SimpleNamespace(heads=cfg.num_attention_heads)
    theta = cfg.rope_parameters["rope_theta"]
    h = rms_norm(x, w["input_layernorm.weight"], cfg.rms_norm_eps)
    q, k, v = (h @ w[f"self_attn.{p}_proj.weight"].T for p in "qkv")
    t = len(x)
    future = np.triu(np.ones((t, t), dtype=bool), 1)
    heads = []
    for i in range(shape.heads):
        kv = i // group  # query head i shares key/value head i // group
        qi = rotate(q[:, i * d : (i + 1) * d], theta)
        ki = rotate(k[:, kv * d : (kv + 1) * d], theta)
        scores = np.where(future, -np.inf, qi @ ki.T / np.sqrt(d))
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        out = weights @ v[:, kv * d : (kv + 1) * d]
        if i == zero_head:
            out = np.concatenate([out[:1] if not first else 0 * out[:1], np.zeros_like(out[1:])])
        heads.append(out)
    x = x + np.concatenate(heads, -1) @ w["self_attn.o_proj.weight"].T
    h = rms_norm(x, w["post_attention_layernorm.weight"], cfg.rms_norm_eps)
    gate = h @ w["mlp.gate_proj.weight"].T
    mlp = (gate / (1 + np.exp(-gate)) * (h @ w["mlp.up_proj.weight"].T)) @ w["mlp.down_proj.weight"].T
    return x + mlp


def layer_io(model, ids, layer):
    """(input, output) of decoder layer ``layer`` in one forward pass, each (T, hidden) float64."""
    module = model.module
    seen = {}

    def keep_input(_, args, kwargs):
        seen["in"] = (args[0] if args else kwargs["hidden_states"])[0]

    def keep_output(_, __, out):
        seen["out"] = (out[0] if isinstance(out, tuple) else out)[0]

    block = module.model.layers[layer]
    pre = block.register_forward_pre_hook(keep_input, with_kwargs=True)
    post = block.register_forward_hook(keep_output)
    try:
        run(model, ids)
    finally:
        pre.remove()
        post.remove()
    return seen["in"].double().numpy(), seen["out"].double().numpy()


def no_hooks_left(module) -> bool:
    """No hook of ours on any submodule. transformers installs output-capturing hooks of its own
    on the first run that returns attention weights, and keeps them; those are not counted."""
    hooks = [(*m._forward_pre_hooks.values(), *m._forward_hooks.values()) for m in module.modules()]
    return all(getattr(h, "__module__", "").startswith("transformers.") for kept in hooks for h in kept)


def logit_diff(module, ids, target, foil, heads=(), first=False):
    with ablated(module, heads, first=first):
        logits = run(module, ids)[0][-1]
    return float(logits[target] - logits[foil])


def test_reference_layer_matches_the_clean_model(loaded, ids):
    model, module = loaded, loaded.module
    for layer in range(2):
        x, out = layer_io(model, ids, layer)
        np.testing.assert_allclose(reference_layer(module, layer, x), out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("layer, head", [(0, 0), (0, 3), (1, 1), (1, 2)])
def test_zero_ablation_equals_the_layer_recomputed_with_the_head_slice_zeroed(
    loaded, ids, layer, head, first
):
    model, module = loaded, loaded.module
    x_clean, out_clean = layer_io(model, ids, layer)
    with ablated(model, [(layer, head)], first=first):
        x, out = layer_io(model, ids, layer)
    np.testing.assert_array_equal(x, x_clean)  # earlier layers are untouched
    expected = reference_layer(module, layer, x, zero_head=head, first=first)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert np.abs(out[1:] - out_clean[1:]).max() > 1e-3
    if first:
        assert np.abs(out[0] - out_clean[0]).max() > 1e-4
    else:  # the first position is left alone, and with it everything it feeds in this layer
        np.testing.assert_allclose(out[0], out_clean[0], rtol=1e-6, atol=1e-6)
    assert no_hooks_left(module)


def test_mean_ablation_puts_the_reference_mean_in_every_position_but_the_first(loaded, ids):
    model, tokenizer = loaded, loaded.tokenizer
    means = head_means(loaded, tokenizer("a dog ran after the ball and caught it")["input_ids"])
    assert means.shape == (2, 4, 8)
    clean = head_outputs(loaded, ids)
    with ablated(model, [(1, 2)], mode="mean", means=means):
        outputs = head_outputs(loaded, ids)
    np.testing.assert_allclose(
        outputs[1, 1:, 2], np.broadcast_to(means[1, 2], outputs[1, 1:, 2].shape), atol=1e-6
    )
    np.testing.assert_allclose(outputs[1, 0, 2], clean[1, 0, 2], atol=1e-6)
    assert np.abs(clean[1, 0, 2] - means[1, 2]).max() > 1e-3  # so leaving it alone is seen
    with ablated(model, [(1, 2)], mode="mean", means=means, first=True):
        every = head_outputs(loaded, ids)
    np.testing.assert_allclose(every[1, :, 2], np.broadcast_to(means[1, 2], every[1, :, 2].shape), atol=1e-6)
    np.testing.assert_allclose(outputs[0], clean[0], atol=1e-6)  # layer 1 is before the change
    np.testing.assert_allclose(outputs[1, :, [0, 1, 3]], clean[1, :, [0, 1, 3]], atol=1e-6)


def test_hooks_are_removed_after_an_error(loaded, ids):
    model, module = loaded, loaded.module
    clean = run(model, ids)[0]
    with pytest.raises(RuntimeError), ablated(model, [(0, 1), (1, 3)]):
        raise RuntimeError("boom")
    assert no_hooks_left(module)
    np.testing.assert_allclose(run(model, ids)[0], clean, rtol=SAME_RUN, atol=SAME_RUN)


@pytest.mark.parametrize(
    "heads, message",
    [
        ([(2, 0)], "Layer 3 does not exist: this model has layers 1–2"),
        ([(-1, 0)], "Layer 0 does not exist"),
        ([(0, 4)], "Head 5 of layer 1 does not exist: each layer has heads 1–4"),
    ],
)
def test_heads_that_do_not_exist_are_refused(loaded, heads, message):
    model, module = loaded, loaded.module
    with pytest.raises(ValueError, match=message):
        check_heads(model, heads)
    with pytest.raises(ValueError, match=message), ablated(model, heads):
        pass
    assert no_hooks_left(module)


def test_bad_modes_and_masks_are_refused(loaded):
    model, module = loaded, loaded.module
    with (
        pytest.raises(ValueError, match="Unknown ablation 'half'; choose zero or mean"),
        ablated(model, [(0, 0)], "half"),
    ):
        pass
    with (
        pytest.raises(ValueError, match="Mean-ablation needs every head's mean output"),
        ablated(model, [(0, 0)], "mean"),
    ):
        pass
    with pytest.raises(ValueError, match=r"needs \(batch, 2, 4\)"):
        knockout(shape_of(model), np.ones((1, 3, 4), bool))
    assert no_hooks_left(module)


def test_rows_of_a_batch_get_their_own_heads(loaded, ids):
    model = loaded
    mask = np.zeros((3, 2, 4), dtype=bool)
    mask[1, 0, 2] = mask[2, 1, 0] = mask[2, 1, 3] = True
    batch = hooked_run(model, [ids] * 3, edits=knockout(shape_of(model), mask)).logits.numpy()
    for row, heads in enumerate([[], [(0, 2)], [(1, 0), (1, 3)]]):
        with ablated(model, heads):
            np.testing.assert_allclose(batch[row], run(model, ids)[0], atol=1e-5)


def test_answer_tokens(llama):
    _, tokenizer = llama
    word = answer_token(tokenizer, "because", PROMPT)
    assert word.text == " because"  # the space a continuing word starts with
    assert answer_token(tokenizer, "the", PROMPT + " ").text == "the"
    assert answer_token(tokenizer, ".", PROMPT).text == "."  # punctuation is read as typed, no space
    pieces = [tokenizer.decode([i]) for i in tokenizer(" suitcase", add_special_tokens=False)["input_ids"]]
    assert len(pieces) > 1
    named = " + ".join(map(repr, pieces))  # a word of several tokens is refused, its pieces named
    with pytest.raises(
        ValueError, match=re.escape(f"Foil: ' suitcase' is {len(pieces)} tokens here ({named})")
    ):
        answer_token(tokenizer, "suitcase", PROMPT, "Foil")
    with pytest.raises(ValueError, match=re.escape("(' s' + 'uit' + 'ca' + 'se'), not one: type one token.")):
        answer_token(tokenizer, " suitcase", PROMPT)  # ' s' is a letter, no word to offer
    with pytest.raises(ValueError, match=re.escape("(' wa' + 'rm'), not one: type one token, e.g. ' wa'.")):
        answer_token(tokenizer, " warm", PROMPT)
    with pytest.raises(ValueError, match="Target: the text is empty"):
        answer_token(tokenizer, "  ", PROMPT)


def test_ranking_refuses_a_target_equal_to_the_foil(loaded, ids):
    model, tokenizer = loaded, loaded.tokenizer
    word = answer_token(tokenizer, " because")
    with pytest.raises(ValueError, match="The target and the foil are the same token"):
        rank_by_ablation(model, ids, word, answer_token(tokenizer, "because", PROMPT))


def test_batched_ranking_equals_knocking_out_one_head_at_a_time(loaded, ids):
    model, module, tokenizer = loaded, loaded.module, loaded.tokenizer
    target, foil = answer_token(tokenizer, " because"), answer_token(tokenizer, " the")
    calls = []
    ranking = rank_by_ablation(model, ids, target, foil, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 2), (1, 2), (2, 2)]
    assert ranking.clean == pytest.approx(logit_diff(model, ids, target.id, foil.id), abs=1e-5)
    for layer in range(2):
        for head in range(4):
            expected = logit_diff(model, ids, target.id, foil.id, [(layer, head)])
            assert ranking.ablated[layer, head] == pytest.approx(expected, abs=1e-5)
    best = ranking.ranking.best
    assert ranking.drop[best.layer, best.head] == ranking.drop.max()
    np.testing.assert_allclose(ranking.relative_drop * abs(ranking.clean), ranking.drop)
    assert no_hooks_left(module)


def hand_written_hook(module, layer, head, value, positions):
    """A pre-hook on ``layer``'s o_proj that writes ``value`` into ``head``'s slice at ``positions``."""
    d = module.config.hidden_size // module.config.num_attention_heads

    def hook(_, args):
        x = args[0].clone()
        x[:, positions, head * d : (head + 1) * d] = torch.as_tensor(value, dtype=x.dtype)
        return (x, *args[1:])

    return module.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(hook)


@pytest.mark.parametrize("first", [False, True])
def test_mean_ablation_equals_a_hand_written_hook(loaded, ids, first):
    model, module, tokenizer = loaded, loaded.module, loaded.tokenizer
    means = head_means(loaded, tokenizer("a dog ran after the ball and caught it")["input_ids"])
    positions = list(range(0 if first else 1, len(ids)))
    handle = hand_written_hook(module, 0, 1, means[0, 1], positions)
    try:
        expected = run(model, ids)[0]
    finally:
        handle.remove()
    with ablated(model, [(0, 1)], "mean", means, first=first):
        np.testing.assert_allclose(run(model, ids)[0], expected, atol=1e-5)


def test_the_first_position_is_found_with_a_kv_cache(loaded, ids):
    """Decoding one token at a time, the hook still knows which token is the first."""
    model, module = loaded, loaded.module
    with ablated(model, [(0, 0), (1, 3)]):
        whole = run(model, ids)[0]
        with torch.inference_mode():
            out = module(input_ids=torch.tensor([ids[:5]]), use_cache=True)
            rows = [out.logits[0, -1]]
            for token in ids[5:]:
                out = module(input_ids=torch.tensor([[token]]), **cache_keywords(module, out.past_key_values))
                rows.append(out.logits[0, -1])
    np.testing.assert_allclose(torch.stack(rows).numpy(), whole[4:], atol=1e-4)
    assert no_hooks_left(module)


def test_the_ranking_leaves_the_first_position_alone_unless_asked(loaded, ids):
    model, tokenizer = loaded, loaded.tokenizer
    target, foil = answer_token(tokenizer, " because"), answer_token(tokenizer, " the")
    kept = rank_by_ablation(model, ids, target, foil)
    every = rank_by_ablation(model, ids, target, foil, first=True)
    assert not kept.first and every.first and "first token too" in every.ranking.what
    for layer, head in [(0, 0), (0, 2), (1, 1)]:
        assert kept.ablated[layer, head] == pytest.approx(
            logit_diff(model, ids, target.id, foil.id, [(layer, head)]), abs=1e-5
        )
        assert every.ablated[layer, head] == pytest.approx(
            logit_diff(model, ids, target.id, foil.id, [(layer, head)], first=True), abs=1e-5
        )
    assert np.abs(kept.ablated[0] - every.ablated[0]).max() > 1e-4


def test_mean_ablation_ranking_matches_single_runs(loaded, ids):
    model, tokenizer = loaded, loaded.tokenizer
    means = head_means(loaded, tokenizer("a dog ran after the ball and caught it")["input_ids"])
    target, foil = answer_token(tokenizer, " because"), answer_token(tokenizer, " the")
    ranking = rank_by_ablation(model, ids, target, foil, mode="mean", means=means)
    with ablated(model, [(1, 3)], "mean", means):
        logits = run(model, ids)[0][-1]
    assert ranking.ablated[1, 3] == pytest.approx(logits[target.id] - logits[foil.id], abs=1e-5)


def test_a_cancelled_ranking_leaves_the_model_clean(loaded, ids):
    model, module, tokenizer = loaded, loaded.module, loaded.tokenizer
    clean = run(model, ids)[0]

    class Stop(Exception):
        pass

    def cancel_in_second_layer(done, total):
        if done == 1:
            raise Stop

    with pytest.raises(Stop):
        rank_by_ablation(model, ids, answer_token(tokenizer, " because"), answer_token(tokenizer, " the"),
                         progress=cancel_in_second_layer)  # fmt: skip
    assert no_hooks_left(module)
    np.testing.assert_allclose(run(model, ids)[0], clean, rtol=SAME_RUN, atol=SAME_RUN)


def test_attention_ranking_reads_the_last_row_at_the_targets_earlier_copy(loaded, ids):
    model, tokenizer = loaded, loaded.tokenizer
    _, attentions = run(model, ids, attentions=True)
    word = answer_token(tokenizer, " because")
    j = ids.index(word.id)
    ranking = rank_by_attention(attentions, ids, word)
    np.testing.assert_array_equal(ranking.scores, attentions[:, :, -1, j])
    assert f"position {j + 1}" in ranking.what
    with pytest.raises(ValueError, match="does not occur earlier in the prompt"):
        rank_by_attention(attentions, ids, AnswerToken(next(i for i in range(300) if i not in ids), " x"))


def test_an_unsupported_family_or_a_model_without_a_language_model_head_is_refused(llama):
    from transformers import OPTConfig, OPTForCausalLM

    opt = OPTForCausalLM(
        OPTConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32)
    )
    with pytest.raises(ValueError, match=r"opt is not a decoder family .* Supported decoders: Llama \(llama"):
        check_heads(SimpleNamespace(module=opt), [(0, 0)])
    with pytest.raises(ValueError, match="LlamaModel is not one"):
        shape_of(SimpleNamespace(module=llama[0].model))  # the body without its language-model head


def test_hooks_act_only_in_the_thread_that_installed_them(loaded, ids):
    import threading

    model = loaded
    clean = run(model, ids)[0]
    seen = {}
    with ablated(model, [(0, 0), (1, 1)]):
        knocked = run(model, ids)[0]
        other = threading.Thread(target=lambda: seen.update(logits=run(model, ids)[0]))
        other.start()
        other.join(patience(60))
        outputs = head_outputs(loaded, ids)  # recording hooks, too, stay in their thread
    np.testing.assert_allclose(seen["logits"], clean, rtol=SAME_RUN, atol=SAME_RUN)
    assert np.abs(knocked - clean).max() > 1e-4
    assert np.all(outputs[0, 1:, 0] == 0) and np.any(outputs[0, 0, 0] != 0)
