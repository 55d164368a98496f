"""Offline, proven: the app's smoke of every panel and each command run with the network refused.

Two interpreters, one for the smoke (``python -m app smoke``) and one running each command in
turn through ``app.main.main`` (what ``python -m app ARGS`` calls), each started with
``network_guard.py`` copied as ``sitecustomize.py`` into a folder on PYTHONPATH: Python imports it
before anything else, so every socket, name look-up and ``create_connection`` in the app, in its
worker threads and in any Python process it starts fails with ``NetworkUsed`` and is written, with
its stack, to a log the test reads (an attempt the app catches still fails the test). A
subprocess, not a patch inside pytest, so that nothing pytest imported first hides an import-time
connection, and so that the environment can be hostile: Hugging Face's offline switches are set
to "0", and the app must turn them on itself.

Models: the bundled MiniLM for ``heads`` and a tiny random Llama folder for the decoder
commands. For the smoke, a tiny random Llama stands in for SmolLM2 in the data folder, so the
decoder panels load and run a model too. ``models add`` is the one command that reaches the
network, and is not run.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.models import smollm2
from tests.tiny_models import save_tiny_decoder, save_tiny_llama
from tests.waits import patience

pytestmark = pytest.mark.models
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
GUARD = Path(__file__).with_name("network_guard.py")
PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """A function running ``python -m app ARGS`` with the network refused: (returncode, stdout,
    stderr, the log of refused attempts)."""
    site = tmp_path_factory.mktemp("site")
    shutil.copy(GUARD, site / "sitecustomize.py")
    log = site / "network.log"
    data = tmp_path_factory.mktemp("data")
    stand_in = save_tiny_llama(data / smollm2.NAME)
    (stand_in / smollm2.RECEIPT).write_text(json.dumps({"weights_sha256": "a tiny random stand-in"}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]),
        ATTENTION_LAB_NETWORK_LOG=str(log),
        ATTENTION_LAB_DATA=str(data),
        HF_HUB_OFFLINE="0",  # hostile: the app must switch these on itself
        TRANSFORMERS_OFFLINE="0",
        HF_HUB_DISABLE_TELEMETRY="0",
    )

    def run(*args: str, command=("-m", "app")):
        log.unlink(missing_ok=True)
        out = subprocess.run(
            [sys.executable, *command, *args], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=patience(300),
        )  # fmt: skip
        return out.returncode, out.stdout, out.stderr, log.read_text() if log.exists() else ""

    return run


@pytest.fixture(scope="module")
def decoder_folder(tmp_path_factory):
    return str(save_tiny_decoder(tmp_path_factory.mktemp("tiny-llama"), "llama"))


def test_the_guard_refuses_and_logs(offline):
    """The guard works: a connection attempt that the program catches is still logged."""
    attempt = "import socket\ntry:\n    socket.create_connection(('example.org', 80))\nexcept OSError: pass"
    code, _, _, log = offline(attempt, command=("-c",))
    assert code == 0 and "network use refused: socket.create_connection(('example.org', 80))" in log


COMMANDS = {
    "heads": ["heads", "--model", "minilm", "--text", "The trophy did not fit because it was big",
              "--find", "it", "trophy"],
    "heads (decoder)": ["heads", "--model", "{decoder}", "--pattern", "induction"],
    "predict": ["predict", "--model", "{decoder}", "--text", PROMPT, "--generate", "3", "--logit-lens"],
    "predict (knockout)": ["predict", "--model", "{decoder}", "--text", PROMPT, "--ablate", "1.1", "2.3",
                           "--target", " it", "--foil", " was"],
    "stream": ["stream", "--model", "{decoder}", "--text", PROMPT],
    "steer": ["steer", "--model", "{decoder}", "--text", PROMPT, "--plus", " cat", "--minus", " mat",
              "--layer", "1", "--strength", "2", "--generate", "3"],
    "bench": ["bench", "--impl", "numpy-naive", "torch-naive", "--lengths", "32", "--heads", "1",
              "--head-dim", "8", "--repeats", "1"],
    "induction": ["induction", "--steps", "20"],
    "models list": ["models", "list"],
}  # fmt: skip

# Runs each command in turn through app.main.main, which is what ``python -m app ARGS`` calls: one
# interpreter for all of them, so torch is imported once (a process each took 90 s, not 20).
DRIVER = """
import json, sys
from app.main import main
codes = {}
for name, argv in json.loads(sys.argv[1]).items():
    print(f"=== {name}", flush=True)
    codes[name] = main(argv)
print("=== codes\\n" + json.dumps(codes))
"""


def test_every_command_never_opens_a_connection(offline, decoder_folder):
    commands = {name: [a.format(decoder=decoder_folder) for a in argv] for name, argv in COMMANDS.items()}
    code, out, err, log = offline(DRIVER, json.dumps(commands), command=("-c",))
    assert log == "", f"a command tried the network:\n{log}"
    assert code == 0, err
    sections = dict(part.split("\n", 1) for part in out.split("=== ")[1:])
    assert json.loads(sections.pop("codes")) == dict.fromkeys(COMMANDS, 0), err
    assert list(sections) == list(COMMANDS) and all(text.strip() for text in sections.values())


@pytest.mark.slow
def test_smoke_of_every_panel_never_opens_a_connection(offline, tmp_path):
    """Also the suite's one smoke of every panel: a PNG each, nothing printed on stderr."""
    code, out, err, log = offline("smoke", "--screenshots", str(tmp_path))
    assert log == "", f"the smoke tried the network:\n{log}"
    assert (code, err) == (0, "")
    from app.panels import PANELS

    assert out.count("ok ") == len(PANELS), out
    pngs = sorted(tmp_path.glob("*.png"))
    assert len(pngs) == len(PANELS)
    for path in pngs:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_the_app_switches_hugging_face_offline_itself(monkeypatch):
    """Before any command runs (here --version, which exits while parsing), whatever the
    environment said."""
    from app.main import main
    from core.offline import SWITCHES

    for name in SWITCHES:
        monkeypatch.setenv(name, "0")
    with pytest.raises(SystemExit):
        main(["--version"])
    assert all(os.environ[name] == "1" for name in SWITCHES)
