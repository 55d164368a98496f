"""Which words make two sentences close (core.interp.similarity) on the bundled MiniLM, every
method against transformers' BertModel run directly with hooks written here."""

from contextlib import contextmanager

import numpy as np
import pytest

from core import models
from core.interp.similarity import similarity_scores

torch = pytest.importorskip("torch")
A, B = "A man is playing a guitar.", "Someone plays music on an instrument."


@pytest.fixture(scope="module")
def minilm():
    return models.load_model("minilm")


@contextmanager
def first_block_reads(module, value):
    """While inside, the embeddings' output (what the first block reads) is ``value`` (B, T, hidden)."""
    handle = module.embeddings.register_forward_hook(lambda _, __, out: value)
    try:
        yield
    finally:
        handle.remove()


def cosine_by_hand(model, ids, other, value=None):
    """(B,) cos(the last layer's mean over ``ids``, its first block reading ``value``; that of ``other``)."""
    module = model.module
    with torch.no_grad():
        fixed = module(input_ids=torch.tensor([other])).last_hidden_state[0].mean(0)
    rows = 1 if value is None else value.shape[0]
    tokens = torch.tensor([ids] * rows)
    if value is None:
        with torch.no_grad():
            out = module(input_ids=tokens).last_hidden_state
    else:
        with first_block_reads(module, value):
            out = module(input_ids=tokens).last_hidden_state
    return torch.nn.functional.cosine_similarity(out.mean(1), fixed[None], dim=-1)


def test_every_method_is_its_formula_on_bert_run_directly(minilm):
    s = similarity_scores(minilm, A, B, steps=4)
    tok = minilm.tokenizer
    ids, other = tok(A)["input_ids"], tok(B)["input_ids"]
    assert (s.ids, s.other_ids) == (tuple(ids), tuple(other))
    assert s.cosine == pytest.approx(float(cosine_by_hand(minilm, ids, other)[0]), abs=1e-6)
    with torch.no_grad():
        e = minilm.module.embeddings(input_ids=torch.tensor([ids]))[0]
        seen = minilm.module(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    weights = torch.stack([a[0] for a in seen]).double().numpy()
    np.testing.assert_allclose(s.methods["attention"], weights[-1].mean((0, 1)), atol=1e-6)
    product = np.eye(len(ids))
    for layer in weights.mean(1):
        product = (0.5 * layer + 0.5 * np.eye(len(ids))) @ product
    np.testing.assert_allclose(s.methods["rollout"], product.mean(0), atol=1e-6)

    def gradient_at(x):
        x = x.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(cosine_by_hand(minilm, ids, other, x).sum(), [x])
        return grad

    np.testing.assert_allclose(s.methods["gradxinput"], (gradient_at(e[None])[0] * e).sum(-1), atol=1e-5)
    alphas = (torch.arange(4) + 0.5) / 4
    summed = gradient_at(alphas[:, None, None] * e).sum(0)
    np.testing.assert_allclose(s.methods["ig"], (e * summed / 4).sum(-1), atol=1e-5)
    with torch.no_grad():
        base = float(cosine_by_hand(minilm, ids, other, torch.zeros_like(e)[None])[0])
    assert s.ig.gap == pytest.approx(s.methods["ig"].sum() - (s.cosine - base), abs=1e-9)
    for i in (0, 3, len(ids) - 1):
        gone = e.clone()
        gone[i] = 0
        with torch.no_grad():
            without = float(cosine_by_hand(minilm, ids, other, gone[None])[0])
        assert s.methods["occlusion"][i] == pytest.approx(s.cosine - without, abs=1e-5)


def test_a_decoder_an_empty_sentence_and_bad_steps_are_refused(minilm, tmp_path):
    from tests.tiny_models import save_tiny_decoder

    decoder = models.load_model(save_tiny_decoder(tmp_path / "llama", "llama"))
    with pytest.raises(ValueError, match="is a decoder"):
        similarity_scores(decoder, A, B)
    with pytest.raises(ValueError, match="Type both sentences"):
        similarity_scores(minilm, A, "  ")
    with pytest.raises(ValueError, match="1 to 512 steps"):
        similarity_scores(minilm, A, B, steps=0)
