"""torch gets half the cores once the model libraries are imported, unless the user chose."""

import os
import subprocess
import sys

import pytest

from core.models.libraries import torch_threads

pytestmark = pytest.mark.models
pytest.importorskip("torch")

SHOW = "from core.models import libraries; torch, _ = libraries(); print(torch.get_num_threads())"


def threads_in_a_fresh_interpreter(**env: str) -> int:
    """torch's thread count after ``libraries()`` in a new interpreter with ``env`` added."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", SHOW], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


def test_half_the_cores_at_least_one():
    cores = len(os.sched_getaffinity(0))
    assert torch_threads() == max(1, cores // 2)
    assert threads_in_a_fresh_interpreter() == torch_threads()


def test_the_users_choice_wins():
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one core: half of it is all of it")
    assert threads_in_a_fresh_interpreter(OMP_NUM_THREADS=str(cores)) == cores
