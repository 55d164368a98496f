"""Check a standalone build where no project Python package is importable.

    python packaging/check_frozen.py build/dist-full/attention-lab [--model] [--deb FILE.deb]

Runs the frozen ``attention-lab`` from a temporary folder with an environment that holds only
ATTENTION_LAB_DATA, a data folder in that temporary one (no LANG, so the C locale, no HOME, no
DISPLAY): --version, the smoke run over every panel, and with --model the
bundled models offline (MiniLM: `heads --find`; SmolLM2: `models list` finds it inside the build,
`predict`); without --model, that `predict` says the full build includes SmolLM2 and never names
pip. Then it opens the window twice, offscreen, with its settings in
that folder (the second time with the settings the first one saved) and fails if either start
prints anything. With --deb it installs the package (dpkg, as root), runs the installed command the
same way, and removes it again, checking that nothing is left under /opt.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SENTENCE = "The trophy didn't fit in the suitcase because it was too big."
PROMPT = "The capital of France is"


def frozen(
    executable: str, *args: str, home: Path, env: dict | None = None, code: int = 0
) -> subprocess.CompletedProcess:
    """Run the frozen app in ``home`` with ``env`` and a data folder inside ``home`` (so models the
    user added elsewhere are not seen), nothing else; stop the check unless it exits with ``code``."""
    env = {"ATTENTION_LAB_DATA": str(home / "data"), **(env or {})}
    command = [executable, *args]
    result = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != code:
        raise SystemExit(f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def quiet_starts(executable: str, home: Path) -> None:
    """Open the window twice, the second time with saved settings; neither may print anything."""
    env = {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(home / "config")}
    for start in ("first start", "start with saved settings"):
        result = frozen(executable, "--exit-after-paint", home=home, env=env)
        if result.stdout.strip() or result.stderr.strip():
            raise SystemExit(f"the {start} printed:\n{result.stdout}{result.stderr}")
        print(f"{start}: nothing printed")


def check(executable: str, model: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        probe = subprocess.run([sys.executable, "-c", "import app"], cwd=home, capture_output=True, env={})
        print(f"project importable by a plain Python here: {probe.returncode == 0}")
        print(frozen(executable, "--version", home=home).stdout.strip())
        shots = home / "shots"
        print(frozen(executable, "smoke", "--screenshots", str(shots), home=home).stdout.rstrip())
        print(f"{len(list(shots.glob('*.png')))} screenshots")
        quiet_starts(executable, home)
        if model:
            out = frozen(
                executable, "heads", "--text", SENTENCE, "--find", "it", "trophy", "--json", home=home
            ).stdout
            found = json.loads(out)["find"]
            print(
                f"real model, offline: best head for it → trophy is layer {found['layer']}, "
                f"head {found['head']}, weight {found['weight']:.3f}"
            )
            decoder(executable, home)
            added = list((home / "data").glob("*"))
            if added:
                raise SystemExit(f"the full build wrote to the user's data folder: {added}")
        else:
            said = frozen(executable, "predict", "--text", PROMPT, home=home, code=2).stderr.strip()
            if "full build" not in said or "pip" in said:
                raise SystemExit(f"predict without SmolLM2 should point to the full build, not pip: {said}")
            print(f"predict in the lite build: {said}")


def decoder(executable: str, home: Path) -> None:
    """SmolLM2 is listed from inside the build, not the user's data folder, and predicts offline."""
    listed = json.loads(frozen(executable, "models", "list", "--json", home=home).stdout)
    smol = next(m for m in listed if m["key"] == "smollm2")
    inside = Path(executable).resolve().parent
    if not smol["installed"] or not Path(smol["path"]).is_relative_to(inside):
        raise SystemExit(f"SmolLM2 is not listed from inside the build: {smol}")
    print(f"models list: SmolLM2 {smol['layers']} layers × {smol['heads']} heads at {smol['path']}")
    top = json.loads(frozen(executable, "predict", "--text", PROMPT, "--json", home=home).stdout)["top"][0]
    print(f"decoder, offline: {PROMPT!r} → {top['token']!r} {top['prob']:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("executable", help="the attention-lab executable inside the build folder")
    parser.add_argument("--model", action="store_true", help="also run the bundled models (full build)")
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
