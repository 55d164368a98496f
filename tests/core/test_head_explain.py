"""Inside a head on tiny random models of two families: Llama (rotary, grouped-query attention) and
GPT-2 (biases, learned positions, LayerNorm), checked against transformers' own attention. Steps
2–4 on every family, and frozen norms: ``test_head_families``."""

import sys
from contextlib import contextmanager

import numpy as np
import pytest

from core.decoder.adapter import adapter_of, transformers_own
from core.interp.head import direct_shares, head_step, record, token_position, what_it_writes, why_here
from core.models import load_model, run
from tests.sums import assert_adds_up
from tests.tiny_models import LLAMA_PROMPT, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

CELLS = [(0, 0, 5, 2), (1, 1, 13, 3), (1, 2, 13, 13), (0, 2, 7, 0)]  # layer, head, query, key


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def tiny(request, tmp_path_factory):
    """(model, ids, recorded run) of a tiny random model of one family."""
    model = load_model(str(save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)))
    ids = model.tokenizer(LLAMA_PROMPT)["input_ids"]
    return model, ids, record(model, ids)


@contextmanager
def seen_by_transformers(module):
    """Inside: transformers' own eager attention runs, and a hook wrapped around its module-level
    ``eager_attention_forward`` keeps each layer's query, key, scaling and weights."""
    modeling = sys.modules[type(adapter_of(module).attention(0)).__module__]
    own, seen = modeling.eager_attention_forward, {}

    def wrapped(attention, query, key, value, mask, scaling=None, **kwargs):
        out, weights = own(attention, query, key, value, mask, scaling=scaling, **kwargs)
        seen[attention.layer_idx] = (query[0], key[0], scaling, weights[0])
        return out, weights

    modeling.eager_attention_forward = wrapped
    try:
        with transformers_own(module):
            yield seen
    finally:
        modeling.eager_attention_forward = own


def transformers_run(model, ids):
    with seen_by_transformers(model.module) as seen, torch.no_grad():
        logits = model.module(input_ids=torch.tensor([ids])).logits[0, -1].double()
    return seen, logits


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-6)


def test_q_k_and_weights_are_what_transformers_own_attention_sees(tiny):
    model, ids, rec = tiny
    seen, _ = transformers_run(model, ids)
    for layer, head, i, j in CELLS:
        query, key, scaling, weights = seen[layer]
        step = head_step(rec, layer, head, i, j)
        np.testing.assert_allclose(step.q, query[head, i].numpy(), atol=1e-6)
        np.testing.assert_allclose(step.k, key[rec.kv_head(head), j].numpy(), atol=1e-6)
        assert step.scale == pytest.approx(scaling)
        assert step.weight == pytest.approx(float(weights[head, i, j]), abs=1e-6)
        np.testing.assert_allclose(step.row, weights[head, i].numpy(), atol=1e-6)
        shifted = np.exp(step.scores - step.scores.max())
        np.testing.assert_allclose(shifted / shifted.sum(), step.row, atol=1e-6)
        np.testing.assert_allclose(step.row @ step.values, step.output, atol=1e-5)


def test_a_key_after_the_query_is_masked_with_weight_zero(tiny):
    step = head_step(tiny[2], 1, 0, 3, 9)
    assert step.masked and step.weight == 0 and np.isneginf(step.scores[9])


def test_the_parts_sum_to_the_real_pre_softmax_score(tiny):
    model, ids, rec = tiny
    seen, _ = transformers_run(model, ids)
    for layer, head, i, j in CELLS:
        query, key, scaling, _ = seen[layer]
        real = float(query[head, i].double() @ key[rec.kv_head(head), j].double()) * scaling
        split = why_here(rec, layer, head, i, j)
        assert relative(split.pairs.sum(), real) < 1e-5
        assert relative(split.query_totals.sum(), real) < 1e-5
        assert relative(split.key_totals.sum(), real) < 1e-5
        assert len(split.query_parts) == split.pairs.shape[0] and len(split.largest()) == min(
            50, split.pairs.size
        )
        assert "L1 H1" in split.query_parts if layer else "L1 H1" not in split.query_parts


def test_gpt2_has_position_and_bias_parts_and_llama_none(tiny):
    model, _, rec = tiny
    parts = why_here(rec, 1, 0, 13, 4).key_parts
    gpt2 = model.family == "GPT-2"
    assert ("position embedding" in parts) is gpt2
    assert ({"attention biases", "norm bias", "key bias"} <= set(parts)) is gpt2


def test_direct_shares_sum_to_the_real_logit_difference(tiny):
    model, ids, rec = tiny
    _, logits = transformers_run(model, ids)
    target, foil = ids[2], ids[5]
    shares = direct_shares(rec, target, foil)
    real = float(logits[target] - logits[foil])
    assert relative(shares.values.sum(), real) < 1e-5
    assert relative(shares.logit_difference, real) < 1e-5
    assert shares.heads.shape == (rec.layers, rec.heads) and shares.names[0] == "embeddings"
    rest = sum(v for n, v in zip(shares.names, shares.values, strict=True) if not n.startswith("L"))
    assert relative(shares.heads.sum() + shares.mlps.sum() + rest, real) < 1e-5


def test_a_head_writes_its_output_through_the_frozen_final_norm(tiny):
    _, ids, rec = tiny
    writes = what_it_writes(rec, 1, 1, 6, 3)
    assert writes.up[0][1] >= writes.up[-1][1] and writes.down[0][1] <= writes.down[-1][1]
    assert writes.key_token == ids[3] and writes.rank >= 1 and writes.copy == writes.paths[3]
    assert_adds_up(writes.paths, writes.whole)  # every key's value path adds up
    assert not writes.paths[7:].any()  # keys after the query: weight 0 by the mask


def test_an_encoder_has_step_one_and_refuses_the_others_saying_why():
    model = load_model("minilm")
    ids = model.tokenizer("The trophy did not fit in the suitcase.")["input_ids"]
    rec = record(model, ids)
    with torch.no_grad():
        weights = model.module(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    step = head_step(rec, 3, 2, 4, 2)
    assert step.weight == pytest.approx(float(weights[3][0, 2, 4, 2]), abs=1e-6) and not step.masked
    shown = run(model, "The trophy did not fit in the suitcase.").attentions  # the Real model panel's
    assert step.weight == pytest.approx(float(shown[3, 2, 4, 2]), abs=1e-6)
    with pytest.raises(ValueError, match="encoder"):
        why_here(rec, 3, 2, 4, 2)


def test_parts_that_do_not_rebuild_the_real_stream_are_refused(tiny, monkeypatch):
    """A family whose parts the split misreads (here: heads written with a wrong output
    projection) gets a clear refusal, not a wrong answer; step 1 still works."""
    _, _, rec = tiny
    adapter = adapter_of(rec.module)
    monkeypatch.setattr(
        type(adapter),
        "out_weight",
        lambda self, layer: torch.zeros(1).expand(self.shape.hidden, self.shape.heads * self.shape.head_dim),
    )
    assert head_step(rec, 1, 0, 5, 2).weight > 0
    with pytest.raises(ValueError, match="do not add up to the real residual stream"):
        why_here(rec, 1, 0, 5, 2)


def test_out_of_range_and_ambiguous_input_is_refused(tiny):
    _, _, rec = tiny
    with pytest.raises(ValueError, match="Layer 3 does not exist"):
        head_step(rec, 2, 0, 1, 1)
    with pytest.raises(ValueError, match="Head 9 does not exist"):
        why_here(rec, 0, 8, 1, 1)
    pieces = ("the", " cat", " sat", " the", " cat")
    assert token_position(pieces, "sat", "query") == 2 and token_position(pieces, "4", "key") == 3
    with pytest.raises(ValueError, match="positions 2, 5"):
        token_position(pieces, "cat", "key")
    with pytest.raises(ValueError, match="tokens 1–5"):
        token_position(pieces, "6", "key")
