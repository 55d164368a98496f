"""``attention-lab linear`` as a user runs it."""

import json

import numpy as np

from core.maths.attention import attend
from core.maths.qkv import random_example
from tests.cli.running import run_cli


def test_the_bracket_trick_prints_both_forms_of_the_first_article_example():
    done = run_cli("linear", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    Q, K, V = random_example(["the", "cat", "sat", "down"], 8, 4, 0).projections()
    np.testing.assert_allclose(doc["softmax"], attend(Q, K, V).output, atol=1e-6)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))  # noqa: E731
    weights = phi(Q) @ phi(K).T
    np.testing.assert_allclose(doc["linear"], weights @ V / weights.sum(1, keepdims=True), atol=1e-6)
    assert doc["multiply_adds"] == {"softmax": 128, "linear": 160, "linear_wins_from": 6}


def test_recall_check_and_features_land_in_one_document():
    done = run_cli(
        "linear", "--recall", "--dim", "16", "--pairs", "4, 64", "--check", "--length", "100",
        "--chunk", "9", "--features", "64", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["dim"] == 16 and [row["pairs"] for row in doc["recall"]] == [4, 64]
    first, last = doc["recall"]
    assert first["softmax"] == last["softmax"] == 1.0 and last["delta"] < first["delta"]
    assert doc["length"] == 100 and max(doc["max_diff"].values()) < 1e-12
    assert doc["features"] == 64 and 0 < doc["error"] < 0.5


def test_bad_numbers_and_misplaced_flags_get_one_line():
    for args, words in (
        (("--dim", "1"), "from 2 to 512"),
        (("--recall", "--pairs", "8,x"), "“x” is not one"),
        (("--features", "0"), "from 1 to 4,096"),
        (("--pairs", "8"), "add --recall"),
        (("--recall", "--pairs", "16384"), "fewer pairs"),
    ):
        done = run_cli("linear", *args)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
