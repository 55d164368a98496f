"""Decoder language models on a tiny random Llama with grouped-query attention (no downloads):
next-token probabilities, sampling settings, generation with the KV cache, cache size, GQA."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import models
from core.interp import decode_timing, kv_cache, prediction
from core.maths import sampling
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PROMPT = "the cat sat on the mat because it"


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def llama(llama_folder):
    return models.load_model(llama_folder, expect=models.DECODER)


def direct(folder, text):
    """(next-token probabilities (V,), attentions (L, H, T, T)) from transformers called directly."""
    tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, local_files_only=True, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        out = model(**tok(text, return_tensors="pt"), output_attentions=True)
    return out.logits[0, -1].softmax(-1).numpy(), torch.stack([a[0] for a in out.attentions]).numpy()


def test_loads_as_a_decoder_with_grouped_query_attention(llama):
    assert (llama.kind, llama.n_layers, llama.n_heads, llama.n_kv_heads, llama.head_dim) == (
        "decoder", 2, 4, 2, 8,
    )  # fmt: skip
    assert llama.is_causal and llama.max_tokens == 64


def test_probabilities_equal_transformers_called_directly(llama, llama_folder):
    p = prediction.predict(llama, PROMPT)
    probs, attentions = direct(llama_folder, PROMPT)
    np.testing.assert_allclose(sampling.reshape(p.logits).probs, probs, atol=1e-5)
    np.testing.assert_allclose(p.attentions, attentions, atol=1e-5)
    assert p.attentions.shape == (2, 4, len(p.ids), len(p.ids)) and p.dropped == 0
    assert "".join(p.pieces) == PROMPT


def test_cached_decoding_equals_running_everything_again(llama):
    g = prediction.Generation.start(llama, prediction.predict(llama, PROMPT, keep_cache=True))
    rng = np.random.default_rng(3)
    for step in range(6):
        dist = sampling.reshape(g.logits, temperature=1.5)
        token = sampling.sample(dist, rng)
        g = g.append(token, dist.probs[token])
        again = prediction.prefill(llama, g.ids, keep_cache=False)
        np.testing.assert_allclose(g.logits, again.logits, atol=1e-5)
        # the decode step's one query row equals the last row of the full n × n weights
        np.testing.assert_allclose(g.last_attentions[:, :, 0], again.attentions[:, :, -1], atol=1e-5)
        assert g.cache_shapes() == [(1, 2, g.length, 8)] * 2
        assert step + 1 == len(g.chosen)
    before = g.logits.copy()
    longer = g.append(int(np.argmax(g.logits)), 1.0)
    assert longer.undo() is g and len(longer.chosen) == len(g.chosen) + 1
    np.testing.assert_array_equal(g.logits, before)  # appending left the shorter one as it was
    other = g.append(7, 0.0)  # after going back, the shared cache is cut and continues correctly
    np.testing.assert_allclose(other.logits, prediction.prefill(llama, other.ids).logits, atol=1e-5)
    assert longer.cache_shapes() == [(1, 2, longer.length, 8)] * 2  # its own, though the cache moved on


def test_generate_is_seeded(llama):
    _, a = prediction.generate(llama, PROMPT, 5, temperature=2.0, seed=7)
    _, b = prediction.generate(llama, PROMPT, 5, temperature=2.0, seed=7)
    assert a == b and len(a) == 5
    _, greedy = prediction.generate(llama, PROMPT, 3, temperature=1e-4)
    assert all(c.prob == pytest.approx(1.0) for c in greedy)


def test_draws_take_the_seeds_numbers_one_after_another():
    """One generator per generation: the k-th draw uses the seed's k-th number."""
    dist = sampling.reshape(np.log([0.1, 0.2, 0.3, 0.4]))
    draws = sampling.Draws(seed=3)
    tokens = [draws.draw(dist)[0] for _ in range(50)]
    numbers = np.random.default_rng(3).random(50)
    assert tokens == [int(np.searchsorted(np.cumsum(dist.sampling), u, side="right")) for u in numbers]
    assert draws.count == 50 and len(set(tokens)) == 4
    token, prob = draws.draw(dist)
    assert prob == dist.probs[token]


def test_temperature_divides_the_logits():
    logits = np.array([2.0, 1.0, 0.5, -1.0])
    for t in (0.3, 1.0, 4.0):
        expected = np.exp(logits / t) / np.exp(logits / t).sum()
        np.testing.assert_allclose(sampling.reshape(logits, temperature=t).probs, expected, rtol=1e-12)
    greedy = sampling.reshape(logits, temperature=1e-4)
    assert greedy.probs[0] == 1.0 and greedy.entropy == pytest.approx(0.0, abs=1e-9)
    flat = sampling.reshape(logits, temperature=1e6)
    assert flat.entropy == pytest.approx(np.log(4), rel=1e-6)


@given(
    st.lists(st.floats(-20, 20, allow_nan=False), min_size=1, max_size=40),
    st.floats(0.01, 1.0),
)
def test_top_p_keeps_the_smallest_set_reaching_p(logits, p):
    probs = sampling.reshape(np.array(logits), top_p=p).probs
    kept = sampling.top_p_mask(probs, p)
    assert probs[kept].sum() >= p - 1e-9
    assert probs[kept].min() >= probs[~kept].max(initial=0.0)  # the most probable ones
    smaller = probs[kept].sum() - probs[kept].min()
    assert smaller < p + 1e-9  # leaving out the least probable kept token falls short of p


@pytest.mark.parametrize("temperature", [0.2, 1.0, 5.0])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 0.999])
def test_top_p_on_a_large_vocabulary_equals_sorting_everything(temperature, p):
    probs = sampling.tempered(np.random.default_rng(1).normal(size=20_000) * 4, temperature)
    order = np.argsort(-probs, kind="stable")
    count = int(np.searchsorted(np.cumsum(probs[order]), p * (1 - 1e-12))) + 1
    assert sorted(np.flatnonzero(sampling.top_p_mask(probs, p))) == sorted(order[:count])


@given(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.3]), min_size=1, max_size=12), st.integers(1, 12))
def test_top_k_keeps_k_most_probable_ties_by_lower_id(values, k):
    probs = np.array(values)
    mask = sampling.top_k_mask(probs, k)
    expected = np.argsort(-probs, kind="stable")[:k]
    assert sorted(np.flatnonzero(mask)) == sorted(expected)


def test_top_k_and_the_rest(llama):
    dist = sampling.reshape(prediction.predict(llama, PROMPT).logits, top_k=3)
    assert dist.kept.sum() == 3
    choices, rest = sampling.top(dist, 5)
    assert [c.kept for c in choices] == [True, True, True, False, False]
    assert [c.prob for c in choices] == sorted((c.prob for c in choices), reverse=True)
    assert sum(c.prob for c in choices) + rest == pytest.approx(1.0)
    assert dist.sampling[~dist.kept].sum() == 0 and dist.sampling.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    assert all(dist.kept[sampling.sample(dist, rng)] for _ in range(200))


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"temperature": 0}, "above 0"),
        ({"temperature": -1}, "above 0"),
        ({"temperature": float("nan")}, "above 0"),
        ({"top_p": 0}, "top-p"),
        ({"top_p": 1.5}, "top-p"),
        ({"top_k": 0}, "top-k"),
    ],
)
def test_impossible_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        sampling.reshape(np.zeros(5), **settings)


def test_bad_prompts(llama):
    for empty in ("", "   \n"):
        with pytest.raises(ValueError, match="Type a prompt"):
            prediction.predict(llama, empty)
    long = prediction.predict(llama, " ".join(["the cat sat on the mat"] * 30))
    assert len(long.ids) == llama.max_tokens and long.dropped > 0


def test_kind_is_checked_both_ways(llama_folder):
    with pytest.raises(ValueError, match=r"is a decoder.*encoder"):
        models.load_model(llama_folder, expect=models.ENCODER)
    with pytest.raises(ValueError, match=r"is an encoder.*models add smollm2"):
        models.load_model("minilm", expect=models.DECODER)


def test_cache_size_matches_the_cached_tensors(llama):
    g = prediction.Generation.start(llama, prediction.predict(llama, PROMPT, keep_cache=True))
    size = kv_cache.cache_size(llama, g.length)
    held = sum(2 * layer.keys.numel() * layer.keys.element_size() for layer in g.shared.cache.layers)
    assert size.total == held == 2 * 2 * 2 * 8 * 4 * g.length
    assert size.total_full == 2 * size.total and size.saving == 2
    smol = dataclasses.replace(llama, n_layers=30, n_heads=9, n_kv_heads=3, head_dim=64)
    assert kv_cache.cache_size(smol, 1).per_token == 46_080 and kv_cache.cache_size(smol, 1).saving == 3


def test_query_heads_sharing_a_key_head(llama_folder):
    assert kv_cache.query_groups(9, 3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert kv_cache.kv_head_of(4, 2).tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="evenly"):
        kv_cache.kv_head_of(9, 2)
    # With key head 0's keys zeroed, exactly the query heads that share it attend uniformly.
    model = models.load_model(llama_folder)
    for layer in model.module.model.layers:
        layer.self_attn.k_proj.weight.data[: model.head_dim] = 0
    w = prediction.predict(model, PROMPT).attentions[:, :, -1]  # (L, H, T): the last token's row
    uniform = np.isclose(w, 1 / w.shape[-1], atol=1e-6).all(axis=-1)  # (L, H)
    assert uniform.tolist() == [[h in kv_cache.query_groups(4, 2)[0] for h in range(4)]] * 2


def test_timing_measures_both_ways(llama):
    timing = decode_timing.time_decode(llama, prediction.encode(llama, PROMPT)[0], tokens=20, repeats=2)
    assert timing.tokens == 20 and timing.cached > 0 and timing.uncached > 0


def test_a_position_drawn_again_takes_the_same_number():
    """Undo, then draw again: the token at generated position k always uses the seed's k-th number."""
    dist = sampling.reshape(np.log([0.1, 0.2, 0.3, 0.4]))
    draws = sampling.Draws(seed=5)
    first = [draws.draw(dist)[0] for _ in range(20)]
    assert [draws.draw(dist, at=k)[0] for k in range(20)] == first
    assert draws.count == 20
    assert draws.number(3) == np.random.default_rng(5).random(4)[3]


def test_a_reading_that_differs_from_transformers_is_refused_on_open(llama_folder, monkeypatch):
    from core.decoder.adapter import Adapter

    real = Adapter.readout
    monkeypatch.setattr(Adapter, "readout", lambda self, hidden: real(self, hidden) + 0.01)
    with pytest.raises(ValueError, match=r"differs from transformers' logits by 0\.01 .*not opened"):
        models.load_model(llama_folder)
