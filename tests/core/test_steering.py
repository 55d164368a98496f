"""Steering with one vector (core.interp.steering) on a tiny random model of every supported family,
against generation by hand: full forward passes of transformers' own model, a hook written here
adding (or projecting out) the same vector."""

from functools import reduce

import numpy as np
import pytest

from core import models
from core.interp.steering import StrengthSweep, greedy, steer, steering_vector, strength_sweep
from tests.tiny_models import FAMILY_TYPES, PARTS, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
PROMPT = "the cat sat on the"
LAYER = 0


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = models.load_model(folder)
    return model, request.param, model.tokenizer(PROMPT)["input_ids"]


def block(module, model_type: str, layer: int):
    return reduce(getattr, PARTS[model_type][0].split("."), module)[layer]


def stream_by_hand(module, model_type, ids, layer):
    """(T, hidden): what block ``layer`` of transformers' own model outputs, read by a hook."""
    seen = {}
    handle = block(module, model_type, layer).register_forward_hook(
        lambda _, __, out: seen.update(x=out[0] if isinstance(out, tuple) else out)
    )
    try:
        with torch.no_grad():
            module(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        handle.remove()
    return seen["x"][0]


def generated_by_hand(module, model_type, ids, new, change=None):
    """Greedy tokens from full forward passes (no KV cache), ``change(hidden)`` applied by a hook to
    block LAYER's output at every position but the first."""

    def hook(_, __, out):
        hidden = (out[0] if isinstance(out, tuple) else out).clone()
        hidden[:, 1:] = change(hidden[:, 1:])
        return (hidden, *out[1:]) if isinstance(out, tuple) else hidden

    handle = block(module, model_type, LAYER).register_forward_hook(hook) if change else None
    made = []
    try:
        with torch.no_grad():
            for _ in range(new):
                logits = module(input_ids=torch.tensor([[*ids, *made]]), use_cache=False).logits[0, -1]
                made.append(int(logits.argmax()))
    finally:
        if handle is not None:
            handle.remove()
    return tuple(made)


def test_the_vector_is_the_difference_of_the_two_streams(tiny):
    model, model_type, _ = tiny
    found = steering_vector(model, " cat", " mat", LAYER, prefix="the dog saw")
    ends = [
        stream_by_hand(model.module, model_type, model.tokenizer(t)["input_ids"], LAYER)[-1]
        for t in ("the dog saw cat", "the dog saw mat")
    ]
    torch.testing.assert_close(found.vector, ends[0] - ends[1], atol=1e-5, rtol=0)
    assert found.norm == pytest.approx(float((ends[0] - ends[1]).norm()), rel=1e-5)
    assert found.stream_norm == pytest.approx(float((ends[0].norm() + ends[1].norm()) / 2), rel=1e-5)


def test_steering_adds_the_vector_as_a_hook_by_hand_does(tiny):
    model, model_type, ids = tiny
    vector = steering_vector(model, " cat", " mat", LAYER)
    steered = greedy(model, ids, 6, steer(vector, 8.0))
    by_hand = generated_by_hand(model.module, model_type, ids, 6, lambda h: h + 8.0 * vector.vector)
    assert steered.ids == by_hand and steered.overflow is None
    normal = greedy(model, ids, 6)
    assert normal.ids == generated_by_hand(model.module, model_type, ids, 6)
    assert greedy(model, ids, 6, steer(vector, 0.0)).ids == normal.ids  # strength 0: the normal text


def test_removing_the_direction_projects_it_out_as_a_hook_by_hand_does(tiny):
    model, model_type, ids = tiny
    vector = steering_vector(model, " cat", " mat", LAYER)
    unit = vector.vector / vector.vector.norm()

    def project(hidden):
        return hidden - (hidden @ unit)[..., None] * unit

    removed = greedy(model, ids, 5, steer(vector, mode="remove"))
    assert removed.ids == generated_by_hand(model.module, model_type, ids, 5, project)


def test_an_overflowing_strength_is_reported_not_crashed_on(tiny):
    model, _, ids = tiny
    vector = steering_vector(model, " cat", " mat", LAYER)
    out = greedy(model, ids, 4, steer(vector, 3e38))
    assert out.overflow is not None and len(out.ids) == out.overflow


def test_bad_input_is_refused_saying_what_to_change(tiny):
    model, _, _ = tiny
    wrong = [
        (lambda: steering_vector(model, " cat", " cat", LAYER), "the same"),
        (lambda: steering_vector(model, " ", " cat", LAYER), "Give two texts"),
        (
            lambda: steering_vector(model, " cat", " mat", model.n_layers),
            f"Layer {model.n_layers + 1} does not",
        ),
        (lambda: steering_vector(model, "c", "m", LAYER, prefix=""), "is one token"),
        (lambda: steer(steering_vector(model, " cat", " mat", LAYER), float("nan")), "finite"),
        (lambda: steer(steering_vector(model, " cat", " mat", LAYER), 1.0, "double"), "Unknown mode"),
    ]
    for call, message in wrong:
        with pytest.raises(ValueError, match=message):
            call()


def next_token_by_hand(module, model_type, ids, change):
    """log-probabilities (vocab,) float64 of the token after ``ids``, ``change`` applied as in
    ``generated_by_hand``."""

    def hook(_, __, out):
        hidden = (out[0] if isinstance(out, tuple) else out).clone()
        hidden[:, 1:] = change(hidden[:, 1:])
        return (hidden, *out[1:]) if isinstance(out, tuple) else hidden

    handle = block(module, model_type, LAYER).register_forward_hook(hook)
    try:
        with torch.no_grad():
            logits = module(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].double()
    finally:
        handle.remove()
    return torch.log_softmax(logits, -1)


def test_a_strength_sweep_is_each_strength_run_by_hand(tiny):
    model, model_type, ids = tiny
    vector = steering_vector(model, " cat", " mat", LAYER)
    strengths = [0.0, 8.0, -3.0, 1.5, 20.0, 0.5, 2.0]  # two batched runs of five rows
    token = int(torch.tensor(greedy(model, ids, 1).ids[0]))
    calls = []
    sweep = strength_sweep(model, ids, vector, strengths, token, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 7), (5, 7), (7, 7)]
    for k, strength in enumerate(strengths):
        logp = next_token_by_hand(model.module, model_type, ids, lambda h, s=strength: h + s * vector.vector)
        assert sweep.prob[k] == pytest.approx(float(logp[token].exp()), abs=1e-5)
        assert sweep.entropy[k] == pytest.approx(float(-(logp.exp() * logp).sum()), abs=1e-4)
        assert sweep.top[k] == int(logp.argmax())
    assert sweep.most == pytest.approx(np.log(model.module.get_output_embeddings().weight.shape[0]))


def test_a_cancelled_sweep_leaves_the_model_as_it_was(tiny):
    model, _, ids = tiny
    vector = steering_vector(model, " cat", " mat", LAYER)
    before = greedy(model, ids, 3).ids

    def cancel(done, total):
        if done:
            raise RuntimeError("cancelled")

    with pytest.raises(RuntimeError, match="cancelled"):
        strength_sweep(model, ids, vector, list(range(12)), 0, progress=cancel)
    assert greedy(model, ids, 3).ids == before
    for bad, message in (([], "one or more finite"), ([1.0, float("inf")], "finite")):
        with pytest.raises(ValueError, match=message):
            strength_sweep(model, ids, vector, bad, 0)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        strength_sweep(model, ids, vector, [1.0], 10**9)


def test_generation_says_how_far_it_is_and_a_cancel_leaves_the_model_as_it_was(tiny):
    model, _, ids = tiny
    calls = []
    made = greedy(model, ids, 4, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)] and len(made.ids) == 4

    def cancel(done, total):
        if done == 2:
            raise RuntimeError("cancelled")

    vector = steering_vector(model, " cat", " mat", LAYER)
    with pytest.raises(RuntimeError, match="cancelled"):
        greedy(model, ids, 4, steer(vector, 8.0), progress=cancel)
    assert greedy(model, ids, 4) == made


def test_the_breakdown_is_the_entropy_peak_after_which_one_token_takes_over():
    def sweep(entropy):
        n = len(entropy)
        zeros = np.zeros(n)
        return StrengthSweep(np.linspace(0, 1, n), 0, zeros, np.array(entropy, float), zeros.astype(int), 5.0)

    assert sweep([3.1, 3.5, 4.5, 3.4, 0.2]).breakdown == 2  # peaks, then falls below where it began
    assert sweep([3.1, 3.5, 4.5, 3.4, 3.2]).breakdown is None  # peaks but never collapses
    assert sweep([3.1, 3.5, 4.5]).breakdown is None  # still rising at the end of the range
    assert sweep([3.1, 2.0, 1.0]).breakdown is None  # only ever surer: no rise before a collapse
