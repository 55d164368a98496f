"""The head atlas (core.interp.atlas) on a tiny random model of every supported family: each score
against its formula on the weights transformers returns for the same ids, the copying score
against the eigenvalues of the whole vocabulary × vocabulary OV circuit, the cloud against numpy's
SVD of the same vectors."""

import numpy as np
import pytest

from core import models
from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run
from core.interp import atlas as atlases
from core.interp.atlas import SCORES, head_atlas, ov_reading, qk_cloud, repeat_probe
from tests.tiny_models import FAMILY_TYPES, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
TEXT = "the cat sat on the mat because it was warm"
N, LOW = 8, 20  # the tiny vocabulary has 300 tokens


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = models.load_model(folder)
    return model, head_atlas(model, TEXT, N, seed=3, low=LOW)


def weights_of(model, ids):
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
    return torch.stack([a[0] for a in out.attentions]).double().numpy()  # (layers, heads, T, T)


def test_every_score_is_its_formula_on_transformers_weights(tiny):
    model, atlas = tiny
    assert list(atlas.scores) == list(SCORES)
    text, repeat = weights_of(model, atlas.text_ids), weights_of(model, atlas.repeat_ids)
    assert atlas.text_ids == tuple(model.tokenizer(TEXT)["input_ids"])
    ids = atlas.repeat_ids
    assert len(ids) == 1 + 2 * N and ids[1 : N + 1] == ids[N + 1 :] and min(ids[1:]) >= LOW
    assert len(set(ids[1 : N + 1])) == N
    t = range(1, text.shape[-1])
    expected = {
        "previous_token": np.mean([text[..., i, i - 1] for i in t], 0),
        "first_token": np.mean([text[..., i, 0] for i in t], 0),
        "self": np.mean([text[..., i, i] for i in range(text.shape[-1])], 0),
        "duplicate_token": np.mean([repeat[..., i, i - N] for i in range(N + 1, 2 * N + 1)], 0),
        "induction": np.mean([repeat[..., i, i - N + 1] for i in range(N + 1, 2 * N + 1)], 0),
    }
    for name, value in expected.items():
        np.testing.assert_allclose(atlas.scores[name], value, atol=1e-6, err_msg=name)


def test_the_copying_score_is_that_of_the_whole_ov_circuit(tiny):
    """W_U W_O,h W_V,h W_E as a vocabulary × vocabulary matrix, its eigenvalues taken whole, for
    every head (heads sharing a value head included)."""
    model, atlas = tiny
    adapter = adapter_of(model.module)
    s = adapter.shape
    embed = model.module.get_input_embeddings().weight.detach().double()
    unembed = model.module.get_output_embeddings().weight.detach().double()
    for layer in range(s.layers):
        for head in range(s.heads):
            value = adapter.qkv_weight(layer, "v", head // (s.heads // s.kv_heads))[0].detach().double()
            out = adapter.out_weight(layer).detach().double()[:, head * s.head_dim : (head + 1) * s.head_dim]
            circuit = unembed @ out @ value @ embed.T  # (vocab, vocab): token in (column) → logits out
            eigen = np.linalg.eigvals(circuit.numpy())
            assert atlas.scores["copying"][layer, head] == pytest.approx(
                eigen.sum().real / np.abs(eigen).sum(), rel=1e-6, abs=1e-9
            ), (layer, head)
    assert np.all(np.abs(atlas.scores["copying"]) <= 1 + 1e-9)


def test_the_round_trip_in_pieces_is_the_whole_product(tiny, monkeypatch):
    """W_E W_U summed over the vocabulary a few rows at a time equals the float64 product taken whole,
    and the copying scores are computed once per model: a second atlas shares them."""
    model, atlas = tiny
    monkeypatch.setattr(atlases, "ROUND_TRIP_ROWS", 7)  # 300 rows: 43 pieces, the last one short
    embed = model.module.get_input_embeddings().weight.detach().double()
    unembed = model.module.get_output_embeddings().weight.detach().double()
    whole = (embed.T @ unembed).numpy()
    scale = (embed.abs().T @ unembed.abs()).numpy()  # the magnitudes summed
    assert np.all(np.abs(atlases.round_trip(model).numpy() - whole) <= 1e-12 * scale)
    again = head_atlas(model, TEXT[:20], N, seed=4, low=LOW)
    assert again.scores["copying"] is atlas.scores["copying"]
    assert not again.scores["copying"].flags.writeable


def test_the_value_rows_are_what_the_run_projects(tiny):
    """The value head the copying score reads is the run's own value at that head."""
    model, atlas = tiny
    adapter = adapter_of(model.module)
    ids = atlas.text_ids
    out = hooked_run(model, ids, cache=[("resid_pre", 0), ("v", 0)], unembed=False)
    with torch.no_grad():
        read = adapter.pre_norm(0)(out.cache["resid_pre", 0]).double()[0]  # (T, hidden)
        for g in range(adapter.shape.kv_heads):
            weight, bias = (None if x is None else x.double() for x in adapter.qkv_weight(0, "v", g))
            by_hand = read @ weight.T + (0 if bias is None else bias)
            np.testing.assert_allclose(out.cache["v", 0][0, :, g].double(), by_hand, rtol=1e-4, atol=1e-5)


def test_the_cloud_is_numpys_svd_of_the_scaled_vectors(tiny):
    model, atlas = tiny
    adapter = adapter_of(model.module)
    s = adapter.shape
    heads = list(range(s.heads // s.kv_heads))  # every query head of key/value head 0
    cloud = qk_cloud(atlas, 1, heads)
    q = np.concatenate([atlas.queries[p][1, heads].reshape(-1, s.head_dim).numpy() for p in (0, 1)])
    k = np.concatenate([atlas.keys[p][1, 0].numpy() for p in (0, 1)])
    k = k + q.mean(0) - k.mean(0)
    scale = np.sqrt(np.linalg.norm(k, axis=1).mean() / np.linalg.norm(q, axis=1).mean())
    joint = np.concatenate([q * scale, k / scale])
    centred = joint - joint.mean(0)
    _, _, vt = np.linalg.svd(centred)
    np.testing.assert_allclose(cloud.points, centred @ vt[:2].T, rtol=1e-4, atol=1e-5)
    assert cloud.is_query.sum() == len(q) and (cloud.head[~cloud.is_query] == 0).all()
    t = len(atlas.text_ids)
    assert cloud.position[t] == 0 and cloud.probe[len(heads) * t] == 1  # the second head, then probe (b)
    # Shifting the keys by one vector and scaling both keeps every q·k up to one number per query.
    scores = (q * scale) @ (k / scale).T
    raw = q @ (k - cloud.shift).T
    np.testing.assert_allclose(scores - raw, (q @ cloud.shift)[:, None] * np.ones((1, len(k))), atol=1e-4)


def test_bad_probes_are_refused_saying_what_to_change(tiny):
    model, atlas = tiny
    with pytest.raises(ValueError, match="too few to draw"):
        repeat_probe(model, N, 0)  # ids from 1000 up: the tiny vocabulary has 300
    with pytest.raises(ValueError, match="at least 2"):
        repeat_probe(model, 1, 0, LOW)
    with pytest.raises(ValueError, match="longer than"):
        repeat_probe(model, 100, 0, LOW)
    if len(model.tokenizer("a")["input_ids"]) == 1:  # no beginning-of-text token added
        with pytest.raises(ValueError, match="one token"):
            head_atlas(model, "a", N, 0, LOW)
    with pytest.raises(ValueError, match="Choose heads from 1"):
        qk_cloud(atlas, 0, [0, 99])
    with pytest.raises(ValueError, match="Layer 99 does not exist"):
        qk_cloud(atlas, 98, [0])
    if model.n_kv_heads < model.n_heads:
        with pytest.raises(ValueError, match="share their keys"):
            qk_cloud(atlas, 0, [0, model.n_heads - 1])


def test_what_a_head_writes_for_a_token_is_its_ov_circuit_by_hand(tiny):
    """Token 40's embedding through the head's value rows, its slice of the output projection and
    the unembedding, written out here from the circuit the copying test builds."""
    model, _ = tiny
    adapter = adapter_of(model.module)
    s = adapter.shape
    layer, head = s.layers - 1, 0
    embed = model.module.get_input_embeddings().weight.detach().double()
    unembed = model.module.get_output_embeddings().weight.detach().double()
    value = adapter.qkv_weight(layer, "v", 0)[0].detach().double()
    out = adapter.out_weight(layer).detach().double()[:, : s.head_dim]
    logits = (unembed @ out @ value @ embed.T)[:, 40]
    reading = ov_reading(model, layer, head, 40)
    assert reading.out_tokens == tuple(logits.topk(8).indices.tolist())
    np.testing.assert_allclose(reading.out_logits, logits.topk(8).values, rtol=1e-5)
    assert reading.source_rank == int((logits > logits[40]).sum()) + 1
    sizes = np.linalg.svd((out @ value).numpy(), compute_uv=False)
    np.testing.assert_allclose(reading.singular, sizes[:4], rtol=1e-9)
    u, _, vh = np.linalg.svd((out @ value).numpy())
    for k in range(4):  # a direction and its sign: the tokens at both ends of the pair agree
        reads = embed.numpy() @ vh[k]
        writes = unembed.numpy() @ u[:, k]
        sign = 1 if reading.reads[k][0] == int(np.argmax(reads)) else -1
        assert reading.reads[k] == tuple(np.argsort(-sign * reads)[:8].tolist())
        assert reading.writes[k] == tuple(np.argsort(-sign * writes)[:8].tolist())
    assert len(reading.reads) == len(reading.writes) == 4 and all(len(r) == 8 for r in reading.reads)
    with pytest.raises(ValueError, match="does not exist"):
        ov_reading(model, s.layers, 0, 40)


def test_an_encoder_gets_the_scores_that_apply_and_its_own_cloud():
    """MiniLM (bundled) on the same formulas over BertModel's returned weights; the scores that
    need a causal model or an unembedding are said not to apply."""
    from core.interp.atlas import NOT_FOR_ENCODERS

    model = models.load_model("minilm")
    atlas = head_atlas(model, TEXT, N, seed=3)
    assert atlas.missing == NOT_FOR_ENCODERS and list(atlas.scores) == [
        "previous_token",
        "first_token",
        "self",
    ]
    tokenizer = model.tokenizer
    assert (
        atlas.text_ids == tuple(tokenizer(TEXT)["input_ids"])
        and atlas.repeat_ids[0] == tokenizer.cls_token_id
    )
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([atlas.text_ids]), output_attentions=True)
    text = torch.stack([a[0] for a in out.attentions]).double().numpy()
    t = np.arange(1, text.shape[-1])
    np.testing.assert_allclose(atlas.scores["previous_token"], text[..., t, t - 1].mean(-1), atol=1e-6)
    np.testing.assert_allclose(atlas.scores["first_token"], text[..., t, 0].mean(-1), atol=1e-6)
    every = np.arange(text.shape[-1])
    np.testing.assert_allclose(atlas.scores["self"], text[..., every, every].mean(-1), atol=1e-6)
    cloud = qk_cloud(atlas, 2, [5])
    assert cloud.points.shape == (2 * (len(atlas.text_ids) + 1 + 2 * N), 2)  # queries and keys, both probes
