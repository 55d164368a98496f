"""Two decoders side by side: every measure against transformers' own runs, hooks written here."""

import numpy as np
import pytest

from core.interp.analysis import analysis_of
from core.interp.compare import profile, side_by_side
from core.models import load_model
from tests.tiny_models import head_zeroed_by_hand, save_tiny_decoder

torch = pytest.importorskip("torch")
PROMPT = "the cat sat on the mat because the"
SINK_PROMPT = "a b c d e f"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(model, its profile) for a tiny Llama and a tiny Gemma 3 (one sliding layer of window 4)."""
    found = []
    for kind in ("llama", "gemma3_text"):
        model = load_model(str(save_tiny_decoder(tmp_path_factory.mktemp(kind), kind)))
        found.append((model, profile(model, PROMPT, "the", "because", SINK_PROMPT, n=6, seed=3)))
    return found


def logits_of(module, ids) -> np.ndarray:
    with torch.inference_mode():
        return module(input_ids=torch.tensor([ids])).logits[0, -1].double().numpy()


def test_each_measure_is_what_transformers_gives(pair):
    for model, p in pair:
        module, tok = model.module, model.tokenizer
        ids = tok(PROMPT)["input_ids"]
        target, foil = (tok(" " + w, add_special_tokens=False)["input_ids"][0] for w in ("the", "because"))
        clean = logits_of(module, ids)
        assert p.clean == pytest.approx(clean[target] - clean[foil], abs=1e-4)
        for layer, head in [(0, 1), (1, 3)]:  # knocked out by hand, the first token left alone
            with head_zeroed_by_hand(module, layer, head, list(range(1, len(ids)))):
                knocked = logits_of(module, ids)
            lost = (p.clean - (knocked[target] - knocked[foil])) / abs(p.clean)
            assert p.answer[layer, head] == pytest.approx(lost, abs=1e-4)
        with torch.inference_mode():
            seen = module(input_ids=torch.tensor([tok(SINK_PROMPT)["input_ids"]]), output_attentions=True)
        weights = torch.stack(seen.attentions)[:, 0].double().numpy()  # (layers, heads, T, T)
        np.testing.assert_allclose(p.sink, weights[:, :, 1:, 0].mean(-1), atol=1e-5)
        repeated = analysis_of(model).induction(6, 3).ids
        with torch.inference_mode():
            seen = module(input_ids=torch.as_tensor(repeated)[None], output_attentions=True)
        weights = torch.stack(seen.attentions)[:, 0].double().numpy()
        rows = np.arange(6, 12)
        np.testing.assert_allclose(p.induction, weights[:, :, rows, rows - 5].mean(-1), atol=1e-5)
        assert p.depth[:, 0].tolist() == [0.25, 0.75] and p.name == model.name


def test_the_sentences_name_each_models_strongest_heads(pair):
    (_, a), (_, b) = pair
    answer, sink, induction = side_by_side(a, b)
    for p in (a, b):
        layer, head, depth, value = p.top("answer", 1)[0]
        assert value == p.answer.max() and depth == p.depth[layer, head]
        assert f"{p.name}'s L{layer + 1} H{head + 1} (depth {depth:.2f}, {value:.2f})" in answer
        assert f"{p.name} {int((p.sink > 0.5).sum())} of {p.sink.size} heads" in sink
        layer, head, _, value = p.top("induction", 1)[0]
        assert f"L{layer + 1} H{head + 1}" in induction and value == p.induction.max()
        first, middle, last = p.by_thirds("sink")  # two layers: none in the middle third
        assert first == pytest.approx(p.sink[0].mean()) and last == pytest.approx(p.sink[1].mean())
        assert np.isnan(middle) and f"{p.name} {first:.2f} / – / {last:.2f}" in sink
