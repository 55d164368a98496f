"""Every supported decoder family, on a tiny random model saved from a configuration: the model
layer's numbers against transformers called directly, or against a hook written here by hand."""

import json

import numpy as np
import pytest

from core import models
from core.decoder import family_of
from core.decoder.adapter import adapter_of
from core.interp import kv_cache, prediction
from core.interp.ablation import ablated, run
from core.interp.lens import logit_lens
from tests.tiny_models import FAMILY_TYPES, head_zeroed_by_hand, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
TEXT = "the cat sat on the mat because it was warm"


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    """(loaded model, transformers' own copy of it in eager mode, model_type)."""
    from transformers import AutoModelForCausalLM

    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    reference = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    return models.load_model(folder), reference, request.param


def reference_logits(reference, ids) -> np.ndarray:
    with torch.inference_mode():
        return reference(input_ids=torch.tensor([ids])).logits[0].double().numpy()


def test_it_loads_as_a_decoder_that_matches_transformers(tiny):
    model, _, model_type = tiny
    assert model.kind == models.DECODER and model.family == family_of(model_type).name
    assert model.matches is not None and model.matches <= 1e-5
    assert "matches transformers" in model.describe()


def test_predictions_equal_transformers(tiny):
    model, reference, _ = tiny
    p = prediction.predict(model, TEXT)
    np.testing.assert_allclose(p.logits, reference_logits(reference, list(p.ids))[-1], atol=1e-5)
    with torch.inference_mode():
        weights = reference(input_ids=torch.tensor([p.ids]), output_attentions=True).attentions
    np.testing.assert_allclose(p.attentions, torch.stack([w[0] for w in weights]).numpy(), atol=1e-6)


def test_zero_ablating_a_head_equals_a_hook_on_the_familys_own_output_projection(tiny):
    model, _, _ = tiny
    ids = model.tokenizer(TEXT)["input_ids"]
    layer, head = 1, adapter_of(model.module).shape.heads - 1
    with ablated(model, [(layer, head)], first=True):
        mine = run(model, ids)[0]
    with head_zeroed_by_hand(model.module, layer, head, slice(None)):
        expected = run(model, ids)[0]
    clean = run(model, ids)[0]
    np.testing.assert_allclose(mine, expected, atol=1e-5)
    assert np.abs(mine - clean).max() > 1e-4  # the head did matter


def test_the_lens_last_layer_is_the_models_logits(tiny):
    model, reference, _ = tiny
    ids = model.tokenizer(TEXT)["input_ids"]
    logits = reference_logits(reference, ids)
    target = int(np.argsort(-logits[-1])[2])
    lens = logit_lens(model, ids, target_id=target)
    np.testing.assert_array_equal(lens.top_ids[-1], logits.argmax(-1))
    probs = np.exp(logits[-1] - logits[-1].max())
    probs /= probs.sum()
    assert lens.target_rank[-1] == 3
    assert lens.target_prob[-1] == pytest.approx(probs[target], abs=1e-5)


def test_the_kv_cache_size_is_the_bytes_transformers_keeps(tiny):
    """Per layer: every token, or a sliding-window layer's last window − 1 (Gemma's tiny window is
    shorter than the text)."""
    model, reference, model_type = tiny
    ids = list(prediction.predict(model, TEXT).ids)
    with torch.inference_mode():
        cache = reference(input_ids=torch.tensor([ids]), use_cache=True).past_key_values
    kept = tuple(layer.keys.shape[2] for layer in cache.layers)
    size = kv_cache.cache_size(model, len(ids))
    assert size.kept == kept and size.total == sum(
        layer.keys.nbytes + layer.values.nbytes for layer in cache.layers
    )
    assert size.saving == model.n_heads / model.n_kv_heads
    if model_type in ("gemma2", "gemma3_text"):
        assert (model.window, model.sliding) == (4, (0,)) and kept == (3, len(ids))
        cells = kv_cache.kept_cells(size, len(ids) - 2)
        assert (cells[0] == kv_cache.LET_GO).sum() == len(ids) - 3 and (cells[1] != kv_cache.LET_GO).all()


def test_generation_with_the_cache_equals_running_the_whole_text(tiny):
    model, reference, _ = tiny
    prompt, chosen = prediction.generate(model, TEXT, 3, seed=1)
    ids = [*prompt.ids, *(c.id for c in chosen)]
    generation = prediction.Generation.start(model, prediction.predict(model, TEXT, keep_cache=True))
    for c in chosen[:-1]:
        generation = generation.append(c.id, c.prob)
    np.testing.assert_allclose(generation.logits, reference_logits(reference, ids[:-1])[-1], atol=1e-4)


def test_weights_that_do_not_fit_the_configuration_are_refused(tmp_path):
    folder = save_tiny_decoder(tmp_path, "llama")
    config = json.loads((folder / "config.json").read_text())
    config["num_hidden_layers"] = 3
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"do not fit its config\.json: .* missing .*layers\.2"):
        models.load_model(folder)


def test_a_model_without_a_tokenizer_is_refused(tmp_path):
    folder = save_tiny_decoder(tmp_path, "gpt2")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    with pytest.raises(ValueError, match="no tokenizer"):
        models.load_model(folder)


def test_a_model_too_large_for_memory_is_refused_with_the_numbers(tmp_path):
    folder = save_tiny_decoder(tmp_path, "gpt2")
    with pytest.raises(
        ValueError, match=r"M parameters: .* GiB in float32 .* only 0\.0 GiB of memory is free"
    ):
        models.load_model(folder, memory_limit=1000)


def test_a_decoder_of_another_family_is_refused_naming_the_supported_ones(tmp_path):
    from transformers import OPTConfig, OPTForCausalLM

    from tests.tiny_models import save_tiny_gpt2

    save_tiny_gpt2(tmp_path)  # for its tokenizer
    config = OPTConfig(vocab_size=300, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32)
    OPTForCausalLM(config).save_pretrained(tmp_path, safe_serialization=True)
    with pytest.raises(ValueError, match=r"opt is not a decoder family .* GPT-2 \(gpt2\)"):
        models.load_model(tmp_path)


def test_the_ranking_equals_knocking_each_head_out_alone(tiny):
    from core.interp.ranking import AnswerToken, rank_by_ablation

    model, _, _ = tiny
    ids = model.tokenizer(TEXT)["input_ids"]
    logits = run(model, ids)[0][-1]
    target, foil = (AnswerToken(int(i), "") for i in np.argsort(-logits)[:2])
    ranking = rank_by_ablation(model, ids, target, foil)
    assert ranking.clean == pytest.approx(float(logits[target.id] - logits[foil.id]), abs=1e-4)
    shape = adapter_of(model.module).shape
    for layer, head in [(0, 0), (shape.layers - 1, shape.heads - 1)]:
        with ablated(model, [(layer, head)]):
            knocked = run(model, ids)[0][-1]
        assert ranking.ablated[layer, head] == pytest.approx(
            float(knocked[target.id] - knocked[foil.id]), abs=1e-4
        )


def test_the_induction_test_reads_every_head(tiny):
    from core.interp.induction import random_induction_test

    model, _, _ = tiny
    test = random_induction_test(model, n=8, seed=1)
    shape = adapter_of(model.module).shape
    assert test.induction.shape == test.previous.shape == (shape.layers, shape.heads)
    assert np.isfinite(test.loss_first) and np.isfinite(test.loss_second)
