import pytest

import core
from app.main import main
from tests.cli.running import run_cli


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"attention-lab {core.__version__}"


def test_smoke_unknown_panel_is_one_line_error():
    out = run_cli("smoke", "--panel", "nope")
    assert out.returncode == 2
    assert (
        out.stderr.strip().splitlines() == [out.stderr.strip().splitlines()[0]]
        and "unknown panel nope" in out.stderr
    )


def test_unknown_panel_lists_the_panels():
    from app.panels import PANELS

    out = run_cli("--panel", "nope")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert f"choose from {', '.join(cls.key for cls in PANELS)}" in out.stderr


def test_bad_flag_exits_2_without_traceback():
    out = run_cli("--no-such-flag")
    assert out.returncode == 2 and "Traceback" not in out.stderr
