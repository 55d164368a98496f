"""Which tokens mattered (core.interp.token_scores) on a tiny random model of every supported family,
against transformers' own model driven by hooks written here: rollout from its returned weights,
gradients by autograd on the first block's input, occlusion by runs with that input zeroed."""

from functools import reduce

import numpy as np
import pytest

from core import models
from core.interp.token_scores import (
    AGREEMENT_SET,
    GAP_STEPS,
    Answer,
    agreement_over,
    attention_rows,
    gap_by_steps,
    grad_x_input,
    integrated_gradients,
    occlusion,
    rollout,
    rows_per_run,
    scores,
    spearman,
    without,
)
from tests.tiny_models import FAMILY_TYPES, PARTS, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
TEXT = "the cat sat on the mat because the cat"
ANSWER = Answer(5, 7)  # logit(token 5) − logit(token 7)


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = models.load_model(folder)
    ids = model.tokenizer(TEXT)["input_ids"]
    return model, request.param, ids


def first_block(model, model_type):
    return reduce(getattr, PARTS[model_type][0].split("."), model.module)[0]


def metric_by_hand(model, model_type, ids, change=None, answer=ANSWER):
    """(m, the first block's input as it was) with ``change(x)`` applied to that input by a hook."""
    seen = {}

    def hook(_, args, kwargs):
        x = args[0] if args else kwargs["hidden_states"]
        seen["x"] = x
        if change is None:
            return None
        new = change(x)
        return ((new, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": new})

    handle = first_block(model, model_type).register_forward_pre_hook(hook, with_kwargs=True)
    try:
        logits = model.module(input_ids=torch.tensor([ids]), use_cache=False).logits
    finally:
        handle.remove()
    return answer.of(logits)[0], seen["x"]


def test_rollout_is_the_formula_on_transformers_weights(tiny):
    model, _, ids = tiny
    with torch.no_grad():
        weights = model.module(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    patterns = attention_rows(model, ids)
    np.testing.assert_allclose(patterns, torch.stack([w[0] for w in weights]).double().numpy(), atol=1e-6)
    t = len(ids)
    product = np.eye(t)
    for w in weights:
        a = 0.5 * w[0].double().mean(0).numpy() + 0.5 * np.eye(t)
        product = (a / a.sum(-1, keepdims=True)) @ product
    np.testing.assert_allclose(rollout(patterns), product[-1], atol=1e-9)
    dropped = rollout(patterns, drop_first=True)
    assert dropped[0] == 0 and dropped.sum() == pytest.approx(1.0)


def test_gradient_times_input_is_autograd_on_the_first_blocks_input(tiny):
    model, model_type, ids = tiny
    leaf = {}

    def as_leaf(x):
        leaf["x"] = x.detach().clone().requires_grad_(True)
        return leaf["x"]

    m, _ = metric_by_hand(model, model_type, ids, as_leaf)
    (grad,) = torch.autograd.grad(m, leaf["x"])
    scores, metric = grad_x_input(model, ids, Answer(5, 7))
    assert metric == pytest.approx(float(m.detach()), abs=1e-5)
    expected = (grad[0].double() * leaf["x"][0].double()).sum(-1).detach().numpy()
    np.testing.assert_allclose(scores, expected, rtol=1e-4, atol=1e-6)


def test_integrated_gradients_is_the_midpoint_sum_written_out(tiny):
    model, model_type, ids = tiny
    answer = Answer(5)  # log p(target): no foil
    _, e = metric_by_hand(model, model_type, ids)
    e = e.detach()
    total = torch.zeros_like(e, dtype=torch.float64)
    steps = 4
    for j in range(steps):
        point = {}

        def scaled(x, alpha=(j + 0.5) / steps, point=point):
            point["x"] = (alpha * x).detach().requires_grad_(True)
            return point["x"]

        m, _ = metric_by_hand(model, model_type, ids, scaled, answer)
        total += torch.autograd.grad(m, point["x"])[0].double()
    expected = (e.double() * total / steps)[0].sum(-1).numpy()
    ig = integrated_gradients(model, ids, answer, steps)
    np.testing.assert_allclose(ig.scores, expected, rtol=1e-4, atol=1e-6)
    with torch.no_grad():
        at_zero, _ = metric_by_hand(model, model_type, ids, torch.zeros_like, answer)
    assert ig.baseline_metric == pytest.approx(float(at_zero), abs=1e-5)
    assert ig.gap == pytest.approx(ig.scores.sum() - (ig.metric - float(at_zero)))


def test_integrated_gradients_from_a_token_baseline_and_more_steps(tiny):
    model, _, ids = tiny
    answer = Answer(5, 7)
    calls = []
    rough = integrated_gradients(model, ids, answer, 2, baseline=3)
    fine = integrated_gradients(model, ids, answer, 64, baseline=3, progress=lambda d, t: calls.append(d))
    each = rows_per_run(len(ids))  # steps a batched run takes: progress after each
    assert calls == [*range(0, 64, each), 64]
    assert abs(fine.gap) <= abs(rough.gap) + 1e-9  # the midpoint sum closes on the integral
    with pytest.raises(ValueError, match="1 to 512 steps"):
        integrated_gradients(model, ids, answer, 0)


def test_the_gap_by_steps_is_each_counts_own_run_landing_one_by_one(tiny):
    model, _, ids = tiny
    answer = Answer(5, 7)
    ticks, landed = [], []
    gaps = gap_by_steps(
        model, ids, answer, 3, (2, 4, 8), lambda d, t: ticks.append((d, t)), partial=landed.append
    )
    for gap, k in zip(gaps, (2, 4, 8), strict=True):
        assert gap == integrated_gradients(model, ids, answer, k, baseline=3).gap
    assert [d for d, _ in ticks] == sorted(d for d, _ in ticks) and ticks[-1] == (14, 14)
    assert len(landed) == 2 and np.isnan(landed[0][1:]).all() and landed[1][1] == gaps[1]
    assert GAP_STEPS == (8, 16, 32, 64, 128, 256)


def test_occlusion_is_runs_with_one_tokens_input_zeroed(tiny):
    model, model_type, ids = tiny
    answer = Answer(5, 7)
    scores = occlusion(model, ids, answer)
    with torch.no_grad():
        m, _ = metric_by_hand(model, model_type, ids)
        for i in (0, 3, len(ids) - 1):

            def zeroed(x, i=i):
                x = x.clone()
                x[:, i] = 0
                return x

            gone, _ = metric_by_hand(model, model_type, ids, zeroed)
            assert scores[i] == pytest.approx(float(m - gone), abs=1e-4)
            log_p, _ = metric_by_hand(model, model_type, ids, zeroed, Answer(5))  # log p(token 5) without i
            assert without(model, ids, i)[5] == pytest.approx(float(log_p.exp()), rel=1e-4)
    with pytest.raises(ValueError, match="does not exist"):
        without(model, ids, len(ids))


def test_spearman_is_the_rank_correlation():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=20), rng.normal(size=20)
    b[3] = b[5]  # a tie
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2], [1, 2, 3])


def test_agreement_over_prompts_compares_each_prompts_rankings(tiny):
    model, _, _ = tiny
    pairs = [("the cat sat on the", " because", " the"), ("the mat because the", " it", " was")]
    calls = []
    found = agreement_over(model, pairs, steps=2, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 2), (1, 2), (2, 2)] and found.each.shape == (2, 5, 5)
    ids = model.tokenizer(pairs[1][0])["input_ids"]
    answer = Answer(*(model.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in pairs[1][1:]))
    one = scores(model, ids, answer, steps=2)
    assert found.each[1, 2, 4] == pytest.approx(spearman(one["gradxinput"], one["occlusion"]))
    np.testing.assert_allclose(found.mean, np.nanmean(found.each, 0))
    assert len(AGREEMENT_SET) >= 30 and all(target != foil for _, target, foil in AGREEMENT_SET)
