"""Every wait over a second says what it is doing on stderr, when piped too; stdout stays the
table or the JSON. Long prompts are echoed by their ends."""

import json

import pytest

from app.main import main
from tests.cli.running import run_cli as piped
from tests.cli.running import stages


@pytest.mark.models
def test_heads_says_what_it_waits_for_when_piped():
    pytest.importorskip("transformers")
    out = piped("heads", "--text", "the cat sat", "--json")
    assert out.returncode == 0, out.stderr
    assert stages(out.stderr) == ["loading the model minilm…", "running all-MiniLM-L6-v2…"]
    assert json.loads(out.stdout)["tokens"] == ["[CLS]", "the", "cat", "sat", "[SEP]"]


@pytest.mark.models
def test_induction_says_it_loads_torch_when_piped():
    pytest.importorskip("torch")
    out = piped("induction", "--steps", "1")
    assert out.returncode == 0, out.stderr
    assert stages(out.stderr) == ["loading torch…"]


@pytest.mark.models
def test_predict_stages_and_a_long_prompt_echoed_by_its_ends(capsys, tmp_path):
    pytest.importorskip("transformers")
    from tests.tiny_models import save_tiny_llama

    llama = save_tiny_llama(tmp_path / "llama")  # a context of 64 tokens
    capsys.readouterr()  # what saving it printed
    prompt = " ".join(["the cat sat on the mat"] * 40)
    assert main(["predict", "--model", str(llama), "--text", prompt, "--top", "2"]) == 0
    out, err = capsys.readouterr()
    assert stages(err) == [f"loading the model {llama}…", f"running {llama.name}…"]
    line = next(line for line in out.splitlines() if line.startswith("tokens ("))
    assert line.startswith("tokens (64): ") and " … (40 tokens) … " in line and len(line) < 200


def test_models_add_names_each_step_when_piped(capsys, monkeypatch, tmp_path):
    from core.models import smollm2

    def install(report, detail=None):
        for done in range(len(smollm2.STEPS)):
            report(done, len(smollm2.STEPS))
        report(len(smollm2.STEPS), len(smollm2.STEPS))
        return tmp_path

    monkeypatch.setattr(smollm2, "verified", lambda: False)
    monkeypatch.setattr(smollm2, "install", install)
    monkeypatch.setattr(smollm2, "installed_folder", lambda: tmp_path)
    assert main(["models", "add", "smollm2"]) == 0
    out, err = capsys.readouterr()
    total = len(smollm2.STEPS)
    assert stages(err) == [f"[{i + 1}/{total}] {step}…" for i, step in enumerate(smollm2.STEPS)]
    assert out.strip() == str(tmp_path)
