"""core.printing.table: labelled, right-aligned numbers that read back as the values."""

import numpy as np
import pytest

from core.printing import table


def test_a_labelled_matrix_reads_back_to_six_digits():
    values = np.array([[0.123456789, -2.5e-9], [123456.7, 1.0]])
    text = table(values, ["the", "cat"], ["a", "b"])
    header, *rows = text.splitlines()
    assert header.split() == ["a", "b"] and [r.split()[0] for r in rows] == ["the", "cat"]
    read = np.array([[float(x) for x in r.split()[1:]] for r in rows])
    np.testing.assert_allclose(read, values, rtol=1e-5)
    assert len({len(line) for line in text.splitlines()}) == 1  # columns line up


def test_a_vector_is_one_column_and_another_format_is_used():
    assert table([0.5, 0.25], number="{:.2f}").splitlines() == ["  0.50", "  0.25"]


def test_more_than_two_dimensions_is_refused():
    with pytest.raises(ValueError, match="1 or 2 dimensions"):
        table(np.zeros((2, 2, 2)))
