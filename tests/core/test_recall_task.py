import numpy as np
import pytest

torch = pytest.importorskip("torch")

from core.lab.recall_task import IGNORE, RecallRun, delta_mix, linear_mix, recall_batch  # noqa: E402
from core.lab.settings import RecallSettings  # noqa: E402
from core.lab.training import torch_generator  # noqa: E402
from core.maths.linear import elu_plus_one, parallel  # noqa: E402


def test_every_question_is_a_stored_key_and_its_target_is_that_keys_value():
    ids, targets = recall_batch(torch_generator(0), 16, 5, 30, 40)
    assert ids.shape == targets.shape == (16, 30)
    for row, target in zip(ids.tolist(), targets.tolist(), strict=True):
        keys, values = row[0:10:2], row[1:10:2]
        assert len(set(keys)) == 5 and all(k < 20 for k in keys) and all(20 <= v < 40 for v in values)
        assert target[:10] == [IGNORE] * 10
        for asked, answer in zip(row[10:], target[10:], strict=True):
            assert answer == values[keys.index(asked)]


def test_the_linear_mixer_is_cores_causal_linear_attention():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 7, 3)) for _ in range(3))
    got = linear_mix(*(torch.tensor(x) for x in (q, k, v))).numpy()
    for b in range(2):
        np.testing.assert_allclose(
            got[b], parallel(elu_plus_one(q[b]), elu_plus_one(k[b]), v[b], causal=True), atol=1e-12
        )


def test_the_parallel_delta_rule_is_the_loop_it_replaces():
    """S ← S + β_t(v_t − S·k_t)k_tᵀ, out_t = S·q_t on unit q and k, written out token by token."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(2, 9, 4)) for _ in range(3))
    beta = rng.uniform(size=(2, 9))
    got = delta_mix(*(torch.tensor(x) for x in (q, k, v, beta))).numpy()
    unit = lambda x: x / np.linalg.norm(x)  # noqa: E731
    for b in range(2):
        S = np.zeros((4, 4))
        for t in range(9):
            kt = unit(k[b, t])
            S = S + beta[b, t] * np.outer(v[b, t] - S @ kt, kt)
            np.testing.assert_allclose(got[b, t], S @ unit(q[b, t]), atol=1e-10)


def test_settings_out_of_range_are_refused_with_their_range():
    with pytest.raises(ValueError, match="number of key-value pairs must be a whole number from 1 to 24"):
        RecallSettings(pairs=0).checked()
    with pytest.raises(ValueError, match="at most 23 pairs"):
        RecallSettings(pairs=24, length=48).checked()


def test_a_short_seeded_run_learns_to_answer_with_a_value_it_was_shown():
    """In 100 steps every model learns that an answer is one of the values in view: far above a
    guess among all 32 values the vocabulary holds, near a guess among the 2 shown."""
    run = RecallRun(RecallSettings(pairs=2, length=16, vocab=64, batch=32, steps=100, every=100))
    first, last = list(run.train())
    assert first.step == 0 and last.step == 100
    for mixer, accuracy in last.accuracy.items():
        assert first.accuracy[mixer] < 0.1 and accuracy > 0.4, (mixer, first.accuracy, last.accuracy)
        assert last.loss[mixer] < first.loss[mixer] - 1.0
