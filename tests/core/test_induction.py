"""The induction task, the attention-only model and its training loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.lab.settings import LIMITS, InductionSettings, least_losses

torch = pytest.importorskip("torch")

from core.lab.data import parse_sequence, repeated_sequences, shortest  # noqa: E402
from core.lab.model import AttentionOnlyTransformer, ModelShape  # noqa: E402
from core.lab.settings import FORMED, first_formed  # noqa: E402
from core.lab.training import InductionRun  # noqa: E402
from core.maths.head_analysis import head_scores  # noqa: E402

pytestmark = pytest.mark.models

# Small enough to train in a few seconds on one core, big enough to grow a real induction head.
SMALL = InductionSettings(seed=0, steps=400, heads=2, length=16, every=20)


@pytest.fixture(scope="module")
def trained():
    """The small 2-layer run, trained once for the module: (run, checkpoints)."""
    run = InductionRun(SMALL)
    return run, list(run.train())


@pytest.mark.parametrize(
    "change",
    [
        {"steps": 0},
        {"steps": 10**9},
        {"steps": 2.5},
        {"lr": 0.0},
        {"lr": -1e-3},
        {"lr": math.nan},
        {"lr": math.inf},
        {"lr": "fast"},
        {"layers": 3},
        {"layers": 0},
        {"heads": 0},
        {"heads": 3},
        {"seed": -1},
        {"length": 1},
        {"vocab": 1},
        {"batch": True},
    ],
)
def test_bad_settings_name_the_allowed_range(change):
    with pytest.raises(ValueError, match=r"from .* to |split evenly") as error:
        InductionSettings(**change).checked()
    assert "\n" not in str(error.value)


def test_limits_cover_every_setting():
    assert set(LIMITS) == set(InductionSettings.__dataclass_fields__)
    assert InductionSettings().checked() == InductionSettings()


def test_the_least_loss_is_a_guess_until_the_block_repeats():
    # targets 1-5 are guesses (the 5th starts the repeat, which nothing announces); 6-9 copy
    assert least_losses(5, 64) == pytest.approx([math.log(64)] * 5 + [0.0] * 4)


def test_repeated_sequences_show_the_block_twice():
    ids = repeated_sequences(torch.Generator().manual_seed(3), 5, 7, 11)
    assert ids.shape == (5, 14) and ids.dtype == torch.int64
    assert torch.equal(ids[:, :7], ids[:, 7:])
    assert int(ids.min()) >= 0 and int(ids.max()) < 11
    again = repeated_sequences(torch.Generator().manual_seed(3), 5, 7, 11)
    assert torch.equal(ids, again)


def test_varied_sequences_repeat_with_their_own_period():
    ids = repeated_sequences(torch.Generator().manual_seed(1), 200, 10, 1000, varied=True)
    periods = set()
    for row in ids.tolist():
        period = next(n for n in range(1, 21) if all(row[p] == row[p - n] for p in range(n, 20)))
        periods.add(period)
    assert periods == set(range(shortest(10), 11))


def test_parse_sequence_accepts_numbers_and_refuses_the_rest():
    assert parse_sequence(" 3, 17 42\t3 ", 64, 64) == [3, 17, 42, 3]
    for text, words in [
        ("3 64 1", "outside the vocabulary"),
        ("3 -1", "outside the vocabulary"),
        ("3 cat 4", "not a token number"),
        ("7", "at least two"),
        ("", "at least two"),
        (" ".join(["1"] * 65), "at most 64"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_sequence(text, 64, 64)


def test_head_scores_of_ideal_patterns():
    length, t = 5, 10
    induction = np.zeros((t, t))
    previous = np.zeros((t, t))
    previous[0, 0] = induction[0, 0] = 1.0
    for i in range(1, t):
        previous[i, i - 1] = 1.0
        induction[i, i - length + 1 if i >= length else 0] = 1.0
    scores = head_scores(np.stack([induction, previous]), length)
    np.testing.assert_allclose(scores[0], [1.0, 0.0])  # induction scores
    np.testing.assert_allclose(scores[1], [1 / 9, 1.0])  # previous-token scores


def test_attention_is_causal_and_rows_sum_to_one():
    model = AttentionOnlyTransformer(ModelShape(layers=2, heads=4, width=32, vocab=10, context=12))
    logits, weights = model(torch.randint(10, (3, 12)))
    assert logits.shape == (3, 12, 10) and weights.shape == (3, 2, 4, 12, 12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 2, 4, 12))
    assert torch.all(weights.triu(diagonal=1) == 0)


def test_a_knocked_out_head_changes_the_output_and_a_full_mask_does_not():
    model = AttentionOnlyTransformer(ModelShape(layers=2, heads=2, width=16, vocab=10, context=8))
    ids = torch.randint(10, (2, 8))
    plain, _ = model(ids)
    kept, _ = model(ids, torch.ones(2, 2))
    mask = torch.ones(2, 2)
    mask[1, 0] = 0
    knocked, _ = model(ids, mask)
    torch.testing.assert_close(plain, kept)
    assert not torch.allclose(plain, knocked)


def test_training_is_deterministic_per_seed():
    def losses(seed):
        run = InductionRun(InductionSettings(seed=seed, steps=6, every=3, width=16, heads=2, length=6))
        return [(c.step, c.loss_first, c.loss_second) for c in run.train()]

    first = losses(5)
    assert [step for step, *_ in first] == [0, 3, 6]
    assert first == losses(5)
    assert first != losses(6)


def test_before_training_nothing_is_learned(trained):
    _, checkpoints = trained
    start = checkpoints[0]
    assert start.step == 0
    assert start.loss_second > 0.8 * math.log(SMALL.vocab)
    assert start.induction.max() < 0.2


def test_two_layers_grow_an_induction_head_in_layer_two(trained):
    _, checkpoints = trained
    end = checkpoints[-1]
    assert end.step == SMALL.steps
    assert end.loss_second < 0.5
    assert end.induction.max() > FORMED
    layer, _ = np.unravel_index(end.induction.argmax(), end.induction.shape)
    assert layer == 1  # an induction head reads a previous-token head of the layer below
    formed = first_formed(checkpoints)
    assert formed is not None and 0 < formed.step <= SMALL.steps
    assert end.probe.shape == (2, 2, 32, 32)


def test_one_layer_cannot_learn_the_repeat():
    run = InductionRun(InductionSettings(**{**SMALL.__dict__, "layers": 1}))
    end = list(run.train())[-1]
    assert end.loss_second > 1.0
    assert end.induction.max() < FORMED


def test_knocking_out_heads_breaks_the_repeat(trained):
    run, checkpoints = trained
    end = checkpoints[-1]
    losses = run.knockouts()
    assert losses.shape == (2, 2)
    # Without its previous-token head the layer-2 induction heads have nothing to match on.
    assert np.unravel_index(losses.argmax(), losses.shape) == (0, end.previous[0].argmax())
    assert losses.max() > end.loss_second + 1.0
    without_layer_2 = np.array([[1.0, 1.0], [0.0, 0.0]])
    assert run.measure(without_layer_2).loss_second > end.loss_second + 1.0
    assert run.measure().loss_second == pytest.approx(end.loss_second)  # nothing stays knocked out


def test_a_typed_repeat_is_copied(trained):
    run, _ = trained
    block = [3, 9, 14, 1, 7, 12]
    reading = run.read(" ".join(map(str, block * 2)))
    assert reading.weights.shape == (2, 2, 12, 12)
    copied = reading.predicted[len(block) : -1].tolist()  # after the 2nd copy's first token
    assert sum(a == b for a, b in zip(copied, block[1:], strict=True)) >= len(block) - 2
    with pytest.raises(ValueError, match="outside the vocabulary"):
        run.read("3 9 64")


def test_training_stops_when_on_step_raises_and_continues_later():
    run = InductionRun(InductionSettings(steps=10, every=5, width=16, heads=2, length=6))

    class Stop(Exception):
        pass

    calls = []

    def stop_at_3(step, total):
        calls.append(step)
        if step == 3:
            raise Stop

    with pytest.raises(Stop):
        list(run.train(stop_at_3))
    assert run.step == 3 and calls == [0, 1, 1, 2, 2, 3]  # midway through each step and after it
    assert [c.step for c in run.train()] == [5, 10]


def test_a_nan_loss_stops_training_with_a_message():
    run = InductionRun(InductionSettings(steps=5, width=16, heads=2, length=6))
    with torch.no_grad():
        run.model.unembed.weight.fill_(math.nan)
    with pytest.raises(ValueError, match=r"nan at step 1 .*lower the learning rate"):
        list(run.train())


def test_training_to_a_step_and_on_gives_the_run_trained_straight_through():
    settings = InductionSettings(steps=10, every=5, width=16, heads=2, length=6)
    straight = [(c.step, c.loss_second) for c in InductionRun(settings).train()]
    run = InductionRun(settings)
    first = [(c.step, c.loss_second) for c in run.train(until=7)]
    assert [step for step, _ in first] == [0, 5, 7] and run.step == 7
    rest = [(c.step, c.loss_second) for c in run.train()]
    assert first[:2] + rest == straight
