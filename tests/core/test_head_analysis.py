"""Head ranking, patterns and word joining on hand-made attention maps (no torch needed)."""

import numpy as np
import pytest

from core.maths.head_analysis import (
    ModelAttention,
    drop_special,
    find_head,
    find_pattern,
    only_part,
    pair_mask,
    to_words,
    token_index,
)

TOKENS = ("[CLS]", "the", "cat", "##s", "saw", "the", "[SEP]")


def make(attn: np.ndarray, segment=None) -> ModelAttention:
    """A 7-token result: [CLS] the cat ##s saw the [SEP]; 'cat ##s' is one word."""
    return ModelAttention(
        tokens=TOKENS,
        labels=TOKENS,
        attentions=attn.astype(np.float32),
        is_causal=False,
        special=np.array([1, 0, 0, 0, 0, 0, 1], dtype=bool),
        segment=np.zeros(7, dtype=int) if segment is None else np.asarray(segment),
        word_ids=np.array([-1, 0, 1, 1, 2, 3, -1]),
        words=("the", "cats", "saw", "the"),
    )


def heads(rng: np.random.Generator) -> np.ndarray:
    """(2, 3, 7, 7): random rows, with layer 2 head 3 exactly 'previous token'."""
    a = rng.random((2, 3, 7, 7))
    a /= a.sum(axis=-1, keepdims=True)
    prev = np.eye(7, k=-1)
    prev[0, 0] = 1.0
    a[1, 2] = prev
    return a


def test_find_head_ranks_by_the_from_to_weight():
    a = heads(np.random.default_rng(0))
    a[0, 1, 4, 2] = 5.0  # not a probability, but the biggest "saw → cat" cell
    ranking = find_head(make(a), "saw", "cat")
    assert (ranking.best.layer, ranking.best.head) == (0, 1)
    assert ranking.best.label == "layer 1, head 2"
    assert ranking.best.score == pytest.approx(5.0)
    scores = [s.score for s in ranking.ranked()]
    assert scores == sorted(scores, reverse=True) and len(scores) == 6
    np.testing.assert_allclose(ranking.scores, a[:, :, 4, 2], rtol=1e-6)


def test_token_index_accepts_positions_and_text_and_explains_misses():
    r = make(heads(np.random.default_rng(1)))
    assert token_index(r, 3) == 3 and token_index(r, "THE") == 1 and token_index(r, "s") == 3
    assert token_index(r, "[sep]") == 6
    with pytest.raises(ValueError, match="outside 0…6"):
        token_index(r, 7)
    with pytest.raises(ValueError, match="split into pieces here \\(cat, ##s\\)"):
        token_index(r, "cats")
    with pytest.raises(ValueError, match="not one of the tokens"):
        token_index(r, "dog")


def test_previous_token_pattern_finds_the_planted_head():
    ranking = find_pattern(make(heads(np.random.default_rng(2))), "previous")
    assert (ranking.best.layer, ranking.best.head, ranking.best.score) == (1, 2, 1.0)
    assert find_pattern(make(heads(np.random.default_rng(2))), "next").scores[1, 2] == 0.0


def test_special_and_same_word_scores():
    a = np.zeros((1, 2, 7, 7))
    a[0, 0, :, 6] = 1.0  # head 1: everything on [SEP]
    a[0, 1] = np.eye(7)
    a[0, 1, 1] = [0, 0, 0, 0, 0, 0.75, 0.25]  # 'the' → other 'the' 0.75
    a[0, 1, 5] = [0, 0.5, 0, 0, 0, 0.5, 0]  # second 'the' → first 'the' 0.5
    r = make(a)
    np.testing.assert_allclose(find_pattern(r, "special").scores, [[1.0, 2.25 / 7]], rtol=1e-6)
    np.testing.assert_allclose(find_pattern(r, "same_word").scores, [[0.0, 0.625]], rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown pattern"):
        find_pattern(r, "diagonal")


def test_patterns_explain_when_they_cannot_apply():
    r = make(heads(np.random.default_rng(3)))
    none_special = ModelAttention(**{**r.__dict__, "special": np.zeros(7, dtype=bool)})
    with pytest.raises(ValueError, match="no special tokens"):
        find_pattern(none_special, "special")
    no_repeat = ModelAttention(**{**r.__dict__, "tokens": ("a", "b", "c", "d", "e", "f", "g")})
    with pytest.raises(ValueError, match="No word occurs twice"):
        find_pattern(no_repeat, "same_word")


def test_to_words_sums_into_a_word_and_averages_out_of_it():
    a = heads(np.random.default_rng(4))
    w = to_words(make(a))
    assert w.tokens == ("[CLS]", "the", "cats", "saw", "the", "[SEP]")
    assert w.shape == (2, 3, 6, 6)
    np.testing.assert_allclose(w.attentions.sum(axis=-1), 1.0, atol=1e-6)
    # to 'cats' = sum over its pieces; from 'cats' = mean of the two pieces' rows
    np.testing.assert_allclose(w.attentions[..., 4, 2], a[..., 5, 2] + a[..., 5, 3], rtol=1e-6)
    np.testing.assert_allclose(w.attentions[..., 2, 0], (a[..., 2, 0] + a[..., 3, 0]) / 2, rtol=1e-6)
    assert w.special.tolist() == [True, False, False, False, False, True]
    assert find_head(w, "saw", "cats").scores.shape == (2, 3)


def test_drop_special_renormalises_only_when_asked():
    a = heads(np.random.default_rng(5))
    kept = drop_special(make(a))
    assert kept.tokens == TOKENS[1:-1]
    sums = kept.attentions.sum(axis=-1)
    # the planted head's 'the' looked only at [CLS]: nothing is left, so zeros, not NaN
    assert sums[1, 2, 0] == 0.0
    sums[1, 2, 0] = 1.0
    np.testing.assert_allclose(sums, 1.0, atol=1e-6)
    raw = drop_special(make(a), renormalize=False)
    np.testing.assert_allclose(raw.attentions, a[..., 1:-1, 1:-1], rtol=1e-6)
    assert kept.attentions.flags.c_contiguous and raw.attentions.flags.c_contiguous  # each head one block


def test_pair_mask_selects_one_block():
    r = make(heads(np.random.default_rng(6)), segment=[0, 0, 0, 0, 1, 1, 1])
    m = pair_mask(r, "A->B")
    assert m.sum() == 4 * 3 and m[0, 4] and not m[4, 0]
    assert pair_mask(r, "B→A").sum() == 3 * 4
    with pytest.raises(ValueError, match="single sentence"):
        pair_mask(make(heads(np.random.default_rng(6))), "A→A")
    with pytest.raises(ValueError, match="Choose one of"):
        pair_mask(r, "A→C")


def test_only_part_zeroes_everything_outside_the_block():
    a = heads(np.random.default_rng(7))
    r = only_part(make(a, segment=[0, 0, 0, 0, 1, 1, 1]), "A→B")
    np.testing.assert_allclose(r.attentions[..., :4, 4:], a[..., :4, 4:], rtol=1e-6)
    assert not r.attentions[..., 4:, :].any() and not r.attentions[..., :, :4].any()
    assert find_head(r, "[CLS]", "saw").best.score == pytest.approx(a[..., 0, 4].max(), rel=1e-6)


def test_express_joins_words_then_hides_specials_then_keeps_one_part():
    from core.maths.head_analysis import express

    r = make(heads(np.random.default_rng(8)), segment=[0, 0, 0, 0, 1, 1, 1])
    assert express(r) is r
    both = express(r, words=True, hide_special=True, rescale=False, part="A→B")
    step = only_part(drop_special(to_words(r), renormalize=False), "A→B")
    assert both.tokens == ("the", "cats", "saw", "the")
    np.testing.assert_array_equal(both.attentions, step.attentions)
    with pytest.raises(ValueError, match="single sentence"):
        express(make(heads(np.random.default_rng(8))), part="A→A")
