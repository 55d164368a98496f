"""Typed numbers: each parser returns a value in range or raises ValueError naming the range."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import inputs

HOSTILE = [
    "",
    " ",
    "99999999999999999999",
    "-99999999999999999999",
    "9" * 5000,
    "1e400",
    "-1e400",
    "1e-400",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "-0",
    "-0.0",
    "−0",
    "٣",
    "٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣",
    "²",
    "１２",
    "0x1F",
    "1_000",
    "1e308",
    ",,,",
    "3, , 4",
    "1:99999999999999999999",
    "99999999999999999999:1",
    "\ud800",
    "😀",
    "a" * 20_000,
]
TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.lists(st.one_of(st.integers(), st.sampled_from(HOSTILE)), max_size=30).map(
        lambda xs: ", ".join(map(str, xs))
    ),
)


def refuses_or_returns(parse, text, check):
    """Only ValueError may escape; its message names the range or says what to type."""
    try:
        value = parse(text)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    check(value)


@given(TEXT)
def test_whole_stays_in_range(text):
    def check(v):
        assert type(v) is int and -5 <= v <= 64

    refuses_or_returns(lambda t: inputs.whole(t, "Heads", -5, 64), text, check)


@given(TEXT)
def test_real_stays_in_range(text):
    def check(v):
        assert type(v) is float and math.isfinite(v) and 0.01 <= v <= 100
        assert math.copysign(1, v) == 1

    refuses_or_returns(lambda t: inputs.real(t, "β", 0.01, 100), text, check)


@given(TEXT)
def test_real_turns_negative_zero_into_zero(text):
    def check(v):
        assert -1 <= v <= 1 and (v != 0 or math.copysign(1, v) == 1)

    refuses_or_returns(lambda t: inputs.real(t, "x", -1, 1), text, check)


@given(TEXT)
def test_reals_stay_in_range(text):
    def check(vs):
        assert 1 <= len(vs) <= 12 and all(-1e3 <= v <= 1e3 and math.isfinite(v) for v in vs)

    refuses_or_returns(lambda t: inputs.reals(t, "Scores", -1e3, 1e3, 12), text, check)


@given(TEXT)
def test_positions_stay_in_range(text):
    def check(ps):
        assert list(ps) == sorted(set(ps)) and all(type(p) is int and 0 <= p <= 63 for p in ps)

    refuses_or_returns(lambda t: inputs.positions(t, "Global positions", 63), text, check)


@given(TEXT)
def test_wholes_stay_in_range_and_count(text):
    def check(ns):
        assert (
            1 <= len(ns) <= 4
            and list(ns) == sorted(set(ns))
            and all(type(n) is int and 2 <= n <= 99 for n in ns)
        )

    refuses_or_returns(lambda t: inputs.wholes(t, "Pairs", 2, 99, 4), text, check)
    assert inputs.wholes("64, 8 16 8", "Pairs", 2, 99, 4) == (8, 16, 64)


@given(TEXT)
def test_seed_stays_in_range(text):
    refuses_or_returns(inputs.seed, text, lambda v: 0 <= v <= inputs.MAX_SEED)


@given(TEXT)
def test_lengths_stay_in_range(text):
    def check(ns):
        assert ns and all(1 <= n <= inputs.MAX_LENGTH for n in ns) and len(ns) < 1000

    refuses_or_returns(inputs.lengths, text, check)


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (lambda t: inputs.whole(t, "n", 0, 10), "٣", 3),
        (lambda t: inputs.whole(t, "n", 0, 10), " 7 ", 7),
        (lambda t: inputs.whole(t, "n", -10, 10), "−4", -4),
        (lambda t: inputs.real(t, "x", -10, 10), "3,25", 3.25),
        (lambda t: inputs.real(t, "x", -10, 10), "−2", -2.0),
        (lambda t: inputs.reals(t, "s", -10, 10, 5), "1 2,3 ,  -4.5", (1.0, 2.0, 3.0, -4.5)),
        (lambda t: inputs.positions(t, "p", 63), "5, 0 5", (0, 5)),
        (lambda t: inputs.positions(t, "p", 63), "", ()),
        (inputs.lengths, "128:1024 64", (128, 256, 512, 1024, 64)),
        (inputs.lengths, "5:5", (5,)),
        (inputs.seed, "4294967295", 4294967295),
    ],
)
def test_ordinary_input_is_read(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (lambda t: inputs.positions(t, "Global positions", 63), "99999999999999999999", "from 0 to 63"),
        (lambda t: inputs.whole(t, "Heads", 1, 64), "0", "from 1 to 64"),
        (lambda t: inputs.real(t, "β", 0.01, 100), "nan", "from 0.01 to 100"),
        (lambda t: inputs.real(t, "β", 0.01, 100), "1e400", "not a finite number"),
        (lambda t: inputs.reals(t, "Scores", -1e3, 1e3, 2), "1 2 3", "at most 2"),
        (inputs.seed, "-1", "from 0 to 4,294,967,295"),
        (inputs.lengths, "1:99999999999999999999", "from 1 to 1,048,576"),
        (inputs.lengths, "256:128", "end is below the start"),
        (inputs.lengths, "", "at least one"),
    ],
)
def test_refusals_name_the_range(parse, text, message):
    with pytest.raises(ValueError, match=message):
        parse(text)
