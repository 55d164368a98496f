"""A prompt longer than the old 512-token cap is read whole, to the model's own context, on a tiny
Gemma 3 whose sliding window (4 tokens) is far shorter than the prompt, against transformers on the
whole text. Past a chosen limit the prompt keeps its <bos> and its last tokens and says so; a run
that would not fit in memory is refused before it starts, with the numbers."""

import numpy as np
import pytest

from core import models
from core.interp import prediction
from core.interp.atlas import head_atlas
from tests.tiny_models import LONG_TEXT as TEXT
from tests.tiny_models import save_long_gemma

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    """A tiny Gemma 3 reading up to 1,024 tokens, its tokenizer adding <bos> first as Gemma's does."""
    return models.load_model(save_long_gemma(tmp_path_factory.mktemp("gemma3")))


@pytest.fixture
def limit():
    """Sets the chosen limit for one test and puts the default back."""
    yield prediction.set_context_limit
    prediction.set_context_limit(None)


def own_logits(model, ids) -> np.ndarray:
    with torch.no_grad():
        return model.module(input_ids=torch.tensor([ids])).logits[0, -1].double().numpy()


def test_a_prompt_past_the_old_cap_is_read_whole_through_the_sliding_window(gemma):
    ids = gemma.tokenizer(TEXT)["input_ids"]
    assert 600 < len(ids) <= gemma.max_tokens == 1024 and ids[0] == 0
    p = prediction.predict(gemma, TEXT)
    assert list(p.ids) == ids and p.dropped == 0 and prediction.cut_note(gemma, p.ids, 0) == ""
    np.testing.assert_allclose(p.logits, own_logits(gemma, ids), atol=1e-4)
    assert p.attentions[0, 0, -1, :-4].max() == 0  # the first layer slides over its last 4 tokens


def test_past_the_limit_the_first_token_and_the_last_are_kept_and_said(gemma, limit):
    ids = gemma.tokenizer(TEXT)["input_ids"]
    limit(100)
    p = prediction.predict(gemma, TEXT)
    assert list(p.ids) == [0, *ids[-99:]] and p.dropped == len(ids) - 100
    np.testing.assert_allclose(p.logits, own_logits(gemma, [0, *ids[-99:]]), atol=1e-4)
    assert prediction.cut_note(gemma, p.ids, p.dropped) == (
        f"The prompt is {len(ids):,} tokens, more than the 100 read here: tokens 2 to {len(ids) - 99} were "
        "dropped, the first (<|endoftext|>) and the last 99 kept."
    )
    atlas = head_atlas(gemma, TEXT, 6, low=20)  # the atlas's text probe is read the same way, and says so
    assert atlas.text_ids == p.ids and atlas.cut == prediction.cut_note(gemma, p.ids, p.dropped)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        limit(1)


def test_a_run_that_does_not_fit_in_memory_is_refused_with_the_numbers(gemma, monkeypatch):
    need = prediction.weights_bytes(gemma, 700)
    assert need == 2 * 4 * 700 * 700 * 4  # layers · heads · n² float32 numbers
    monkeypatch.setattr(prediction, "available_memory", lambda: need)  # half what a run needs
    with pytest.raises(ValueError, match=r"A prompt of 700 tokens needs about 15 MiB .*\(2 layers × 4 heads"):
        prediction.check_fits(gemma, 700)
    with pytest.raises(ValueError, match=r"Shorten the prompt \(on the command line, --context N"):
        prediction.predict(gemma, TEXT)
    prediction.check_fits(gemma, 400)  # a shorter one fits
