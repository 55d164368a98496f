"""torch gets half the cores once the model libraries are imported, unless the user chose."""

import os
import subprocess
import sys

import pytest

from tests.waits import patience

pytestmark = pytest.mark.models
pytest.importorskip("torch")

SHOW = "from core.models import libraries; torch, _ = libraries(); print(torch.get_num_threads())"
CORES = sorted(os.sched_getaffinity(0))


def threads_in_a_fresh_interpreter(cores: int = len(CORES), **env: str) -> int:
    """torch's thread count after ``libraries()`` in a new interpreter that may use ``cores`` of
    this process's cores, with ``env`` added."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=patience(60),
        preexec_fn=lambda: os.sched_setaffinity(0, CORES[:cores]),
    )
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4)])
def test_half_the_cores_it_may_use_at_least_one(cores, threads):
    if cores > len(CORES):
        pytest.skip(f"this machine lets the tests use {len(CORES)} cores")
    assert threads_in_a_fresh_interpreter(cores) == threads


def test_the_users_choice_wins():
    if len(CORES) < 2:
        pytest.skip("one core: half of it is all of it")
    assert threads_in_a_fresh_interpreter(OMP_NUM_THREADS=str(len(CORES))) == len(CORES)
