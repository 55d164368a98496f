"""Logit lens, attention sinks and the induction test on a tiny random Llama."""

import numpy as np
import pytest

from core.interp.ablation import ablated, next_token_probs, run
from core.interp.analysis import analysis_of
from core.interp.induction import induction_test, repeated_random_tokens
from core.interp.lens import logit_lens, read_streams, streams_of, with_target
from core.interp.sinks import sink_scores, without_first_token
from core.maths.attention import softmax

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")


# The lens and the references below compute the same float32 logits with other kernels (other
# batch shapes), so they differ by a few ulps (about 1e-6 on these logits). A probability then
# moves by about that much relative, and where two logits lie that close either may rank first:
# top ids and ranks are checked against the reference's logits, not compared exactly.
CLOSE = 1e-5


def assert_tops(top_ids, logits):
    """Each (…,) top id is a largest of its (…, vocab) logits, up to float32 rounding."""
    chosen = np.take_along_axis(logits, np.asarray(top_ids)[..., None], -1)[..., 0]
    assert np.all(chosen >= logits.max(-1) - CLOSE)


def assert_rank(rank, logits, target):
    """``rank`` is the target's place among (vocab,) logits, ties within float32 rounding either way."""
    above = logits - logits[target]
    assert 1 + np.sum(above > CLOSE) <= rank <= np.sum(above > -CLOSE)


def mean64(values) -> float:
    """The mean of float32 weights in float64, as the code takes it: only the order of the sum
    differs, so the two agree to float64 rounding."""
    return float(np.mean(values, dtype=np.float64))


def test_the_last_layer_of_the_lens_is_the_models_prediction(llama, loaded, ids):
    logits = run(loaded, ids)[0].astype(np.float64)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    target = int(np.argsort(-logits[-1])[3])  # the fourth most likely token
    lens = logit_lens(loaded, ids, target_id=target)
    assert lens.top_ids.shape == lens.top_probs.shape == (2, len(ids))
    assert_tops(lens.top_ids[-1], logits)
    np.testing.assert_allclose(lens.top_probs[-1], probs.max(-1), rtol=CLOSE)
    assert_rank(lens.target_rank[-1], logits[-1], target)
    assert lens.target_prob[-1] == pytest.approx(probs[-1, target], rel=CLOSE)


def test_the_first_layer_of_the_lens_reads_the_stream_after_layer_one(llama, loaded, ids):
    model, _ = llama
    seen = {}
    handle = model.model.layers[0].register_forward_hook(lambda _, __, out: seen.update(h=out))
    try:
        with torch.inference_mode():
            model(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        handle.remove()
    hidden = seen["h"][0] if isinstance(seen["h"], tuple) else seen["h"]
    with torch.inference_mode():
        logits = model.lm_head(model.model.norm(hidden[0]))
        expected = torch.softmax(logits, -1).numpy()
    lens = logit_lens(loaded, ids)
    assert_tops(lens.top_ids[0], logits.numpy())
    np.testing.assert_allclose(lens.top_probs[0], expected.max(-1), rtol=CLOSE)
    assert lens.target_rank is None and lens.formed_at() is None


def test_formed_at_is_the_layer_from_which_the_target_stays_on_top(llama, loaded, ids):
    lens = logit_lens(loaded, ids, target_id=int(run(loaded, ids)[0][-1].argmax()))
    assert lens.target_rank[-1] == 1
    formed = lens.formed_at()
    assert np.all(lens.target_rank[formed:] == 1)
    assert formed == 0 or lens.target_rank[formed - 1] > 1


def test_the_lens_refuses_a_token_outside_the_vocabulary(loaded, ids):
    with pytest.raises(ValueError, match="Token id 300 is outside the vocabulary"):
        logit_lens(loaded, ids, target_id=300)


def test_the_lens_sees_ablations(llama, loaded, ids):
    clean = logit_lens(loaded, ids)
    with ablated(loaded, [(0, 0), (0, 1), (0, 2), (0, 3)]):
        knocked = logit_lens(loaded, ids)
    assert not np.allclose(clean.top_probs[0], knocked.top_probs[0])


def test_sink_scores_are_the_mean_weight_on_position_zero(llama, loaded, ids):
    _, attentions = run(loaded, ids, attentions=True)
    scores = sink_scores(attentions)
    manual = np.array(
        [[mean64([attentions[y, h, i, 0] for i in range(1, len(ids))]) for h in range(4)] for y in range(2)]
    )
    np.testing.assert_allclose(scores, manual, atol=1e-12)
    with pytest.raises(ValueError, match="at least two tokens"):
        sink_scores(attentions[..., :1, :1])


def test_dropping_the_first_token(llama, loaded, ids):
    result = without_first_token(loaded, ids)
    np.testing.assert_allclose(result.full, next_token_probs(loaded, ids))
    np.testing.assert_allclose(result.dropped, next_token_probs(loaded, ids[1:]))
    assert result.full.sum() == pytest.approx(1.0)
    assert 0 < result.total_variation() <= 1
    full_top, dropped_top = result.top(3)
    assert full_top[0] == result.full.argmax() and dropped_top[0] == result.dropped.argmax()
    with pytest.raises(ValueError, match="at least two tokens"):
        without_first_token(loaded, ids[:1])


def test_repeated_random_tokens():
    ids = repeated_random_tokens(300, 20, np.random.default_rng(1), exclude=range(10))
    assert ids.shape == (40,) and np.array_equal(ids[:20], ids[20:])
    assert len(set(ids[:20])) == 20 and ids.min() >= 10
    with pytest.raises(ValueError, match="between 2 and 290"):
        repeated_random_tokens(300, 291, np.random.default_rng(1), exclude=range(10))


def test_induction_scores_and_losses_by_hand(llama, loaded):
    n = 8
    ids = repeated_random_tokens(300, n, np.random.default_rng(0))
    test = induction_test(loaded, ids)
    logits, attentions = run(loaded, ids, attentions=True)
    induction = np.array(
        [[mean64([attentions[y, h, n + k, k + 1] for k in range(n)]) for h in range(4)] for y in range(2)]
    )
    previous = np.array(
        [[mean64([attentions[y, h, i, i - 1] for i in range(1, 2 * n)]) for h in range(4)] for y in range(2)]
    )
    np.testing.assert_allclose(test.induction, induction, atol=1e-12)
    np.testing.assert_allclose(test.previous, previous, atol=1e-12)
    losses = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits[:-1]), torch.from_numpy(ids[1:]), reduction="none"
    )
    np.testing.assert_allclose(test.losses, losses.numpy(), rtol=1e-5)
    assert test.loss_first == pytest.approx(losses[: n - 1].mean().item(), rel=1e-5)
    assert test.loss_second == pytest.approx(losses[n - 1 :].mean().item(), rel=1e-5)
    assert test.heads == ()


def test_induction_with_heads_knocked_out(llama, loaded):
    model, _ = llama
    ids = repeated_random_tokens(300, 8, np.random.default_rng(0))
    clean = induction_test(loaded, ids)
    knocked = induction_test(loaded, ids, heads=[(1, 2), (0, 1)])
    assert knocked.heads == ((0, 1), (1, 2))
    assert knocked.loss_second != pytest.approx(clean.loss_second)
    # Layer 1 reads the same: its weights (≤ 1) agree to float32 rounding across the two runs' kernels.
    np.testing.assert_allclose(knocked.induction[0], clean.induction[0], atol=1e-6)
    assert not any(m._forward_pre_hooks for m in model.modules())
    with pytest.raises(ValueError, match="Layer 3 does not exist"):
        induction_test(loaded, ids, heads=[(2, 0)])


def test_induction_needs_a_repeated_sequence(llama, loaded):
    with pytest.raises(ValueError, match="repeated twice"):
        induction_test(loaded, [5, 6, 7, 8, 5, 6, 7, 9])
    with pytest.raises(ValueError, match="repeated twice"):
        induction_test(loaded, [5, 5])


def test_the_lens_gives_the_same_in_small_chunks(llama, loaded, ids, monkeypatch):
    from core.interp import lens as lens_module

    whole = logit_lens(loaded, ids, target_id=7)
    monkeypatch.setattr(lens_module, "CHUNK_ROWS", 5)  # 2 layers × 14 positions in 6 pieces
    pieces = logit_lens(loaded, ids, target_id=7)
    # Other chunk sizes run other float32 matrix-product kernels, so the logits (up to |6| here,
    # where one float32 ulp is 4.8e-7) differ by an ulp or two, and each probability is exp of a
    # logit difference over a 300-term float32 sum: relative errors of about 1e-6 (measured up to
    # 9.6e-7). rtol 1e-5 allows ten times that and still catches a row lost or counted twice.
    logits = lens_by_hand(loaded, ids, 7)[0]
    assert_tops(pieces.top_ids, logits)
    np.testing.assert_allclose(pieces.top_probs, whole.top_probs, rtol=1e-5, atol=0)
    for rank, layer_logits in zip(pieces.target_rank, logits, strict=True):
        assert_rank(rank, layer_logits[-1], 7)
    np.testing.assert_allclose(pieces.target_prob, whole.target_prob, rtol=1e-5, atol=0)


def lens_by_hand(loaded, ids, target):
    """Every layer's output through norm and unembedding, one row at a time: the logits
    (layers, T, vocab) float32 and, softmax in float64, the target's probability (layers,)."""
    model, seen = loaded.module, []

    def keep(_, __, out):
        seen.append(out)

    handles = [layer.register_forward_hook(keep) for layer in model.model.layers]
    try:
        with torch.inference_mode():
            model(input_ids=torch.tensor([ids]), use_cache=False)  # transformers called directly
    finally:
        for handle in handles:
            handle.remove()
    every, prob = [], []
    for out in seen:
        hidden = (out[0] if isinstance(out, tuple) else out)[0]
        rows = []
        for row in hidden:
            with torch.inference_mode():
                rows.append(model.lm_head(model.model.norm(row)).numpy())
        logits = np.array(rows)  # (T, vocab) float32
        probs = np.exp(logits.astype(np.float64) - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        every.append(logits)
        prob.append(probs[-1, target])
    return np.array(every), np.array(prob)


def test_every_layer_of_the_lens_equals_a_reference_by_hand(llama, loaded, ids):
    target = int(np.argsort(-run(loaded, ids)[0][-1])[2])  # the third most likely at the end
    logits, prob = lens_by_hand(loaded, ids, target)
    lens = logit_lens(loaded, ids, target_id=target)
    assert_tops(lens.top_ids, logits)
    wide = logits.astype(np.float64)
    top_probs = 1 / np.exp(wide - wide.max(-1, keepdims=True)).sum(-1)
    np.testing.assert_allclose(lens.top_probs, top_probs, rtol=CLOSE)
    for rank, layer_logits in zip(lens.target_rank, logits, strict=True):
        assert_rank(rank, layer_logits[-1], target)
    np.testing.assert_allclose(lens.target_prob, prob, rtol=CLOSE)


def test_the_clean_run_keeps_the_streams_weights_and_prediction_of_one_pass(llama, loaded, ids):
    """The decoder panels' shared run: one hooked pass gives the lens its streams, the sinks their
    weights and the prediction its probabilities, as separate runs would."""
    model, _ = llama
    hooks = [len(layer._forward_hooks) for layer in model.model.layers]
    clean = analysis_of(loaded).clean_run(tuple(ids))
    np.testing.assert_allclose(clean.streams.numpy(), streams_of(loaded, ids).numpy(), rtol=CLOSE, atol=1e-6)
    logits, attentions = run(loaded, ids, attentions=True)
    np.testing.assert_allclose(clean.attentions, attentions, atol=1e-6)
    np.testing.assert_allclose(clean.probs, softmax(logits[-1].astype(np.float64)), rtol=CLOSE, atol=1e-9)
    shared, own = read_streams(loaded, clean.streams, target_id=7), logit_lens(loaded, ids, target_id=7)
    np.testing.assert_allclose(shared.top_probs, own.top_probs, rtol=CLOSE)
    np.testing.assert_allclose(shared.target_prob, own.target_prob, rtol=CLOSE)
    assert [len(layer._forward_hooks) for layer in model.model.layers] == hooks  # removed again
    with pytest.raises(ValueError, match="Token id 300 is outside the vocabulary"):
        read_streams(loaded, clean.streams, target_id=300)


def test_a_new_target_is_read_from_the_last_positions_alone(loaded, ids):
    """with_target gives the rank and probability a whole lens gives for that target."""
    streams = streams_of(loaded, ids)
    lens = read_streams(loaded, streams, target_id=7)
    for target in (3, 7, 250):
        whole = read_streams(loaded, streams, target_id=target)
        quick = with_target(loaded, streams, lens, target)
        np.testing.assert_array_equal(quick.target_rank, whole.target_rank)
        np.testing.assert_allclose(quick.target_prob, whole.target_prob, rtol=1e-5)
        np.testing.assert_array_equal(quick.top_ids, whole.top_ids)
        assert quick.target_id == target and quick.formed_at() == whole.formed_at()
    bare = with_target(loaded, streams, lens, None)
    assert bare.target_rank is None and bare.target_prob is None and bare.formed_at() is None
    with pytest.raises(ValueError, match="Token id 300 is outside the vocabulary"):
        with_target(loaded, streams, lens, 300)


def test_the_copy_boundary_and_which_targets_can_be_copied(llama, loaded):
    n = 8
    ids = repeated_random_tokens(300, n, np.random.default_rng(0))
    test = induction_test(loaded, ids)
    at = np.arange(1, 2 * n)  # losses[p] is drawn at its target's position p + 1
    second = at > test.boundary
    assert test.boundary == n - 0.5 and at[second][0] == n  # the second copy starts at target n
    assert test.loss_second == pytest.approx(test.losses[second].mean(), rel=1e-9)
    assert test.loss_first == pytest.approx(test.losses[~second].mean(), rel=1e-9)
    # a target can be copied when the token before it appeared earlier: the last n − 1 only
    copyable = [p + 1 for p in range(2 * n - 1) if ids[p] in ids[:p]]
    assert copyable == list(range(n + 1, 2 * n)) and len(copyable) == n - 1
