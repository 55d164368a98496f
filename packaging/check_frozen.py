"""Check a standalone build where no project Python package is importable.

    python packaging/check_frozen.py build/dist-full/attention-lab [--model] [--deb FILE.deb]

Runs the frozen ``attention-lab`` with an empty environment from a temporary folder: --version,
the smoke run over every panel, and with --model the real model offline (`heads --find`). With
--deb it installs the package (dpkg, as root), runs the installed command the same way, and removes
it again, checking that nothing is left under /opt.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SENTENCE = "The trophy didn't fit in the suitcase because it was too big."


def frozen(executable: str, *args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    result = subprocess.run(
        [executable, *args], cwd=home, env=env, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def check(executable: str, model: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        probe = subprocess.run(
            [sys.executable, "-c", "import app"], cwd=home, capture_output=True, env={"PATH": "/usr/bin:/bin"}
        )
        print(f"project importable by a plain Python here: {probe.returncode == 0}")
        print(frozen(executable, "--version", home=home).stdout.strip())
        shots = home / "shots"
        print(frozen(executable, "smoke", "--screenshots", str(shots), home=home).stdout.rstrip())
        print(f"{len(list(shots.glob('*.png')))} screenshots")
        if model:
            out = frozen(
                executable, "heads", "--text", SENTENCE, "--find", "it", "trophy", "--json", home=home
            ).stdout
            found = json.loads(out)["find"]
            print(
                f"real model, offline: best head for it → trophy is layer {found['layer']}, "
                f"head {found['head']}, weight {found['weight']:.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("executable", help="the attention-lab executable inside the build folder")
    parser.add_argument("--model", action="store_true", help="also load the bundled model (full build)")
    parser.add_argument("--deb", help="a .deb to install, check and remove")
    args = parser.parse_args()
    executable = str(Path(args.executable).resolve())
    print(f"== unpacked folder: {executable}")
    check(executable, args.model)
    if args.deb:
        print(f"== installed from {args.deb}")
        subprocess.run(["dpkg", "-i", args.deb], check=True, capture_output=True)
        package = subprocess.run(
            ["dpkg-deb", "-f", args.deb, "Package"], check=True, capture_output=True, text=True
        ).stdout.strip()
        try:
            check("/usr/bin/attention-lab", args.model)
            menu = Path("/usr/share/applications/attention-lab.desktop")
            print(f"menu entry installed: {menu.exists()}")
        finally:
            subprocess.run(["dpkg", "-r", package], check=True, capture_output=True)
        left = Path("/opt/attention-lab").exists() or Path("/usr/bin/attention-lab").exists()
        print(f"removed cleanly: {not left}")
        if left:
            raise SystemExit("files were left behind after dpkg -r")


if __name__ == "__main__":
    main()
