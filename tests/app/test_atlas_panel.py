"""Panel "Head atlas" on a tiny random Llama with grouped-query attention: the maps are core's
scores of transformers' own weights, clicks choose a head, the cloud and the copy table follow it,
bad input keeps the last result and says what to change."""

import numpy as np
import pytest

from app.panels.atlas import AtlasPanel
from core.interp import head as inside
from core.interp.atlas import head_atlas, ov_reading
from core.models import load_model
from tests.app.conftest import idle, settle

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

TEXT = "the cat sat on the mat because the cat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = AtlasPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    assert (p.live.wanted.layer, p.live.wanted.head) == (1, 1)  # a head the tiny model has
    settle(p.live.apply, text=TEXT, length=6, seed=1, low=20)
    return p


def test_the_maps_are_the_scores_of_the_models_own_weights(panel, llama_folder):
    r = panel.live.result
    assert r is not None, panel.message.text()
    model = load_model(llama_folder)
    with torch.no_grad():
        weights = model.module(input_ids=torch.tensor([r.atlas.text_ids]), output_attentions=True).attentions
    previous = np.array([[weights[n][0, h].diagonal(-1).mean().item() for h in range(model.n_heads)]
                         for n in range(model.n_layers)])  # fmt: skip
    np.testing.assert_allclose(panel.maps.maps["previous_token"].values, previous, atol=1e-6)
    expected = head_atlas(model, TEXT, 6, 1, 20)
    for key, scores in expected.scores.items():
        np.testing.assert_allclose(panel.maps.maps[key].values, scores, atol=1e-6)
    top = panel.maps.list.item(0, 0).text()
    settle(panel.maps.list.cellClicked.emit, 0, 0)
    assert f"L{panel.live.state.layer} H{panel.live.state.head}" == top
    settle(panel.maps.maps["induction"].clicked.emit, 1, 2)
    assert (
        (panel.live.state.layer, panel.live.state.head)
        == (2, 3)
        == (panel.maps.layer.value(), panel.maps.head.value())
    )


def test_the_other_steps_follow_the_chosen_head(panel, llama_folder):
    settle(panel.live.apply, layer=2, head=3)
    r = panel.live.result
    settle(panel.set_step, 1)
    np.testing.assert_allclose(
        np.nan_to_num(panel.probes.repeat_map.values), np.tril(r.atlas.repeat_weights[1, 2]), atol=1e-7
    )
    settle(panel.set_step, 2)
    assert len(panel.cloud.queries.data) == len(r.atlas.text_ids) + len(r.atlas.repeat_ids)
    settle(panel.cloud.together.setChecked, True)
    group = panel.live.result.model.n_heads // panel.live.result.model.n_kv_heads
    assert len(panel.cloud.queries.data) == group * (len(r.atlas.text_ids) + len(r.atlas.repeat_ids))
    point = panel.cloud.queries.points()[5]
    panel.cloud._hovered(panel.cloud.queries, [point], None)
    assert "weighs most" in panel.cloud.hovered.text() and len(panel.cloud.lines.getData()[0]) == 6
    settle(panel.set_step, 3)
    model = load_model(llama_folder)
    token = model.tokenizer(" the", add_special_tokens=False)["input_ids"][0]
    settle(panel.copies.token.setText, " the")
    expected = ov_reading(model, 1, 2, token)
    assert panel.copies.out.item(0, 1).text() == f"{expected.out_logits[0]:.3f}"
    assert f"{r.atlas.scores['copying'][1, 2]:.3f}" in panel.copies.summary.text()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layer": 9}, "Layer 9, head 1 does not exist"),
        ({"low": 1000}, "too few to draw"),
        ({"length": 1}, "at least 2"),
    ],
)
def test_bad_input_keeps_the_last_result(panel, change, message):
    before = panel.live.result
    settle(panel.live.apply, **change)
    assert message in panel.message.text() and panel.live.result is before


def test_the_last_map_is_each_heads_direct_share_of_the_answer(panel, llama_folder):
    settle(panel.live.apply, answer=TEXT, target=" because", foil=" the")
    model = load_model(llama_folder)
    ids = model.tokenizer(TEXT)["input_ids"]
    target, foil = (
        model.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in (" because", " the")
    )
    shares = inside.direct_shares(inside.record(model, ids), target, foil)
    np.testing.assert_allclose(panel.maps.maps["direct"].values, shares.heads, atol=1e-6)
    assert "direct share of the answer" in panel.maps.summary.text()
    settle(panel.maps.foil.setText, "")
    assert np.isnan(panel.maps.maps["direct"].values).all()
    assert "name a target" in panel.maps.maps["direct"].plot.titleLabel.text
    settle(panel.live.apply, foil=" because")  # the atlas stays; the map says why it is empty
    assert "same token" in panel.message.text() and np.isnan(panel.maps.maps["direct"].values).all()


def test_an_encoder_shows_the_scores_that_apply_and_says_why_not_the_others(panel):
    from core.interp.atlas import NOT_FOR_ENCODERS

    settle(panel.use_model, "minilm")
    r = panel.live.result
    assert r.model.kind == "encoder" and r.ov is None and r.direct is None, panel.message.text()
    expected = head_atlas(load_model("minilm"), TEXT, 6, 1, 20)
    np.testing.assert_allclose(panel.maps.maps["self"].values, expected.scores["self"], atol=1e-6)
    assert np.isnan(panel.maps.maps["induction"].values).all()
    assert "not for an encoder" in panel.maps.maps["copying"].plot.titleLabel.text
    assert panel.maps.list.rowCount() == 0 and "does not apply here" in panel.message.text()
    settle(panel.maps.score.setCurrentIndex, panel.maps.score.findData("first_token"))
    assert panel.maps.list.rowCount() == 12 and NOT_FOR_ENCODERS["induction"] in panel.maps.summary.text()
    settle(panel.set_step, 1)
    assert not np.isnan(panel.probes.text_map.values).any()  # an encoder reads both ways
    settle(panel.set_step, 3)
    assert panel.copies.summary.text() == f"Nothing to read out: {NOT_FOR_ENCODERS['copying']}."


def test_a_token_of_several_pieces_is_refused_in_step_four_and_the_rest_stands(panel):
    r = panel.live.result  # the default token, " Mary", is five pieces in the tiny vocabulary
    assert r.ov is None and r.ranking and r.cloud is not None
    settle(panel.set_step, 3)
    assert "Nothing to read out: Token: ' Mary' is 5 tokens here (' ' + 'M' + 'a' + 'r' + 'y')" in (
        panel.copies.summary.text()
    )
    assert "' Mary' is 5 tokens here" in panel.message.text()
    settle(panel.copies.token.setText, " ")
    assert "Token: the text is empty" in panel.copies.summary.text() and panel.live.result.ranking
    settle(panel.copies.token.setText, " the")
    assert panel.live.result.ov is not None and panel.live.result.unread == ""
