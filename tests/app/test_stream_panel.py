"""Panel "The residual stream" on a tiny random Llama: the journey, the norm, the parts and the
steered completion drawn are transformers' own numbers (hooks and weights read here), runs go
through the worker and can be cancelled, bad input keeps the last result and says what to change."""

import numpy as np
import pytest

from app import worker
from app.panels.stream import StreamPanel
from core.models import load_model
from tests.app.conftest import idle, settle
from tests.sums import assert_adds_up
from tests.waits import patience

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = StreamPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    settle(p.journey.prompt.setText, PROMPT)
    settle(p.steer.live.apply, prompt="the cat sat on", plus=" cat", minus=" mat", layer=1, new=6)
    return p


def run_by_hand(folder, text):
    model = load_model(folder)
    ids = model.tokenizer(text)["input_ids"]
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([ids]), output_hidden_states=True, use_cache=False)
    return model, ids, out


def test_the_journey_and_the_parts_are_transformers_streams_and_logits(panel, llama_folder):
    model, ids, out = run_by_hand(llama_folder, PROMPT)
    r = panel.journey.live.result
    assert r.journey.position == len(ids) - 1 and len(r.labels) == len(ids)
    # hidden_states[k] enters block k; the last one is after the final norm, so blocks 0 … n−2 leave there.
    streams = [h[0, -1].double() for h in out.hidden_states]
    for k, row in enumerate(r.journey.rows):
        assert row.norm_in == pytest.approx(float(streams[k].norm()), rel=1e-5)
    np.testing.assert_allclose(
        panel.journey.curves["leaving"].getData()[1][:-1], [float(s.norm()) for s in streams[1:-1]], rtol=1e-5
    )
    assert panel.journey.table.rowCount() == model.n_layers
    assert panel.journey.table.item(0, 0).text() == f"{float(streams[0].norm()):.2f}"
    settle(panel.set_step, 2)
    logits = out.logits[0, -1].double().numpy()
    top = np.argsort(-logits)[:5]
    values = panel.parts.direct_map.values  # (embeddings, L1, L2, biases) × the top tokens
    assert values.shape == (model.n_layers + 2, 5)
    assert_adds_up(values, logits[top])
    settle(panel.parts.group.setCurrentIndex, 2)  # by kind
    assert panel.parts.direct_map.row_labels == ["embeddings", "attention", "MLPs", "biases"]
    assert_adds_up(panel.parts.direct_map.values, logits[top])


def test_the_norm_written_out_is_the_models_rmsnorm(panel, llama_folder):
    model, _, out = run_by_hand(llama_folder, PROMPT)
    settle(panel.set_step, 1)
    settle(panel.norm.layer.setValue, 2)
    x = out.hidden_states[1][0, -1].double()  # what block 2 (index 1) reads
    norm = model.module.model.layers[1].input_layernorm
    expected = norm.weight.detach().double() * x / torch.sqrt((x**2).mean() + norm.variance_epsilon)
    np.testing.assert_allclose(panel.norm.output_curve.getData()[1], expected.numpy(), rtol=1e-5, atol=1e-7)
    assert panel.norm.table.item(0, 0).text() == f"{float((x**2).mean()):.4g}"  # the mean square
    settle(panel.norm.layer.setValue, 0)  # the final norm: the logits
    assert "final norm" in panel.norm.working.text() and panel.norm.layer.text() == "final"
    logits = out.logits[0, -1].double()
    assert float(panel.norm.table.item(panel.norm.table.rowCount() - 5, 0).text()) == pytest.approx(
        float(logits.max()), rel=1e-3
    )


def generated_by_hand(model, ids, new, vector=None):
    """Greedy tokens from full runs of transformers' model, ``vector`` added by a hook after
    block 1 at every position but the first."""

    def add(_, __, output):
        hidden = (output[0] if isinstance(output, tuple) else output).clone()
        hidden[:, 1:] += vector
        return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

    handle = model.module.model.layers[0].register_forward_hook(add) if vector is not None else None
    made = []
    try:
        with torch.no_grad():
            for _ in range(new):
                logits = model.module(input_ids=torch.tensor([[*ids, *made]]), use_cache=False).logits
                made.append(int(logits[0, -1].argmax()))
    finally:
        if handle is not None:
            handle.remove()
    return tuple(made)


def test_steering_is_the_vector_added_by_a_hand_written_hook(panel, llama_folder):
    settle(panel.set_step, 3)
    model = load_model(llama_folder)
    ids = model.tokenizer("the cat sat on")["input_ids"]
    r = panel.steer.live.result
    assert r.normal.ids == generated_by_hand(model, ids, 6)
    stream = {}
    for text in (" cat", " mat"):
        t = model.tokenizer("I talk about" + text)["input_ids"]
        with torch.no_grad():
            stream[text] = model.module(input_ids=torch.tensor([t]), output_hidden_states=True).hidden_states[
                1
            ][0, -1]
    vector = stream[" cat"] - stream[" mat"]
    assert r.vector.norm == pytest.approx(float(vector.norm()), rel=1e-5)
    assert "stream of 'I talk about cat' minus that of 'I talk about mat'" in panel.steer.summary.text()
    settle(panel.steer.live.apply, strength=3.0)
    r = panel.steer.live.result
    assert r.steered.ids == generated_by_hand(model, ids, 6, 3.0 * vector)
    assert [panel.steer.table.item(k, 1).text() for k in range(6)] == list(r.steered_pieces)
    settle(panel.steer.live.apply, strength=0.0)
    assert panel.steer.live.result.steered.ids == panel.steer.live.result.normal.ids
    sweep = panel.steer.live.result.sweep
    np.testing.assert_allclose(panel.steer.prob_curve.getData()[1], sweep.prob)
    assert sweep.strengths[-1] == panel.steer.live.state.reach


def test_a_new_strength_runs_only_the_steered_completion_and_can_be_cancelled(panel):
    settle(panel.set_step, 3)
    calls = []
    panel.steer.live.progressed.connect(lambda done, total: calls.append((done, total)))
    settle(panel.steer.live.apply, strength=1.5)
    total = 2 * 6 + 21
    assert calls[0] == (6, total) and calls[-1] == (total, total)  # the normal run and the sweep were kept
    before = panel.steer.live.result
    panel.steer.live.apply(new=150)
    assert panel.steer.cancel.isEnabled()
    panel.steer.cancel.click()
    assert worker.wait_idle(patience(60))
    assert panel.steer.live.result is before and panel.steer.progress.state == "stopped"
    assert panel.steer.new.value() == 6 and not panel.steer.cancel.isEnabled()  # the run on screen


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"position": 99}, "Token 99 does not exist"),
        ({"norm": 9}, "Layer 9 does not exist"),
        ({"prompt": "   "}, "Type"),
    ],
)
def test_bad_input_for_the_stream_keeps_the_last_result(panel, change, message):
    before = panel.journey.live.result
    settle(panel.journey.live.apply, **change)
    assert message in panel.message.text() and panel.journey.live.result is before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"plus": " mat"}, "same"),
        ({"layer": 9}, "Layer 9 does not exist"),
        ({"prompt": ""}, "Type a prompt"),
        ({"strength": float("inf")}, "finite"),
        ({"minus": " "}, "Give two texts"),
    ],
)
def test_bad_input_for_steering_keeps_the_last_result(panel, change, message):
    settle(panel.set_step, 3)
    before = panel.steer.live.result
    settle(panel.steer.live.apply, **change)
    assert panel.steer.live.result is before and message in panel.message.text()
    assert panel.message.text()


def test_an_overflowing_strength_is_shown_not_crashed_on(panel):
    settle(panel.set_step, 3)
    settle(panel.steer.live.apply, strength=3e38, reach=0.0)
    r = panel.steer.live.result
    assert r.steered.overflow is not None and r.sweep is None
    assert "overflowed" in panel.steer.summary.text() and "too large" in panel.message.text()
