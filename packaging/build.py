"""Build Attention Lab as a standalone one-folder app, a .tar.xz and a .deb, in a clean venv.

    python packaging/build.py --flavour full   # torch + transformers + MiniLM and SmolLM2
    python packaging/build.py --flavour lite   # NumPy + Qt only

Everything goes under build/: venv-<flavour>/ (the clean build environment), dist-<flavour>/
(the app folder) and the archives. ``--torch`` names the torch requirement for the full flavour
(use a CPU build: see packaging/README.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
NAME = "attention-lab"
BIN = "Scripts" if sys.platform == "win32" else "bin"  # where a venv keeps its programs
# xz level of the .tar.xz and the .deb per flavour; both are compressed on every core. Measured on
# 87 MB of the lite build's libraries: level 6 takes 47-50 s of CPU for 21.1 MB, level 3 32 s for
# 23.6 MB. On 64 MB of torch's libtorch_cpu.so: level 1 24 s for 15.8 MB, level 3 52 s for 15.2 MB,
# level 6 113 s for 13.8 MB; SmolLM2's float16 weights shrink only to 84 % at level 1, in 64 s.
# The full build holds 7 times the lite one's bytes, so it gets level 1: libraries 14 % larger
# for a fifth of level 6's compression time on the libraries.
XZ_LEVELS = {"full": 1, "lite": 6}
# The .deb's dependencies. ldd over the build folder (with LD_LIBRARY_PATH=_internal) finds these
# left out: libc, GL/EGL, libxcb and the Wayland client libraries, which PyInstaller leaves to the
# system's graphics stack, and libXext/libXrender, which the spec drops with GTK. The others are
# bundled but read the system's data (fontconfig's configuration, xkb keymaps) or talk to its services.
SYSTEM_LIBRARIES = (
    "libc6", "libgl1", "libegl1", "libfontconfig1", "libxkbcommon0", "libxkbcommon-x11-0",
    "libxcb1", "libxcb-cursor0", "libxext6", "libxrender1", "libdbus-1-3",
    "libwayland-client0", "libwayland-cursor0", "libwayland-egl1",
)  # fmt: skip


def run(*command, env=None) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=ROOT, env=env)


def version() -> str:
    text = (ROOT / "core" / "__init__.py").read_text(encoding="utf-8")
    return next(line.split('"')[1] for line in text.splitlines() if line.startswith("__version__"))


def make_venv(flavour: str, torch: str, fresh: bool) -> Path:
    """A clean environment with only what the flavour needs, and PyInstaller."""
    path = BUILD / f"venv-{flavour}"
    if fresh and path.exists():
        shutil.rmtree(path)
    if not path.exists():
        venv.create(path, with_pip=True)
    pip = [path / BIN / "pip", "install", "--quiet"]
    run(*pip, "pyinstaller>=6.10", "pyinstaller-hooks-contrib")
    if flavour == "full":
        run(*pip, torch)
        run(*pip, ".[models]")
    else:
        run(*pip, ".")
    return path


def render_icons(env_python: Path) -> Path:
    """The SVG icon rendered to a 256 px PNG (Linux menus) and a .ico (Windows), with Qt."""
    out = BUILD / "icons"
    out.mkdir(parents=True, exist_ok=True)
    code = (
        "import sys\n"
        "from PySide6.QtGui import QGuiApplication, QIcon\n"
        "app = QGuiApplication(['x', '-platform', 'offscreen'])\n"
        "icon = QIcon(sys.argv[1])\n"
        "icon.pixmap(256, 256).save(sys.argv[2] + '.png')\n"
        "icon.pixmap(256, 256).save(sys.argv[2] + '.ico')\n"
    )
    run(env_python, "-c", code, ROOT / "resources" / "icons" / f"{NAME}.svg", out / NAME)
    return out


def convert_smollm2(env_python: Path) -> Path:
    """SmolLM2 fetched and converted by the app's own ``models add`` in the build environment, into
    build/models, where the next build finds it already made (its checksum is checked again)."""
    data = dict(os.environ, ATTENTION_LAB_DATA=str(BUILD / "models"))
    command = [str(env_python), "-m", "app", "models", "add", "smollm2"]
    print("+", " ".join(command), flush=True)
    added = subprocess.run(command, check=True, cwd=ROOT, env=data, stdout=subprocess.PIPE, text=True)
    return Path(added.stdout.strip().splitlines()[-1])


def freeze(env: Path, flavour: str, icons: Path, smollm2: Path | None) -> Path:
    dist = BUILD / f"dist-{flavour}"
    extra = {"ATTENTION_LAB_FLAVOUR": flavour}
    if smollm2 is not None:
        extra["ATTENTION_LAB_SMOLLM2"] = str(smollm2)
    if sys.platform == "win32":  # on macOS, build_dmg.sh sets ATTENTION_LAB_ICON to the .icns
        extra["ATTENTION_LAB_ICON"] = str(icons / f"{NAME}.ico")
    run(
        env / BIN / "pyinstaller",
        "--noconfirm",
        "--clean",
        "--distpath",
        dist,
        "--workpath",
        BUILD / f"work-{flavour}",
        ROOT / "packaging" / f"{NAME}.spec",
        env=dict(os.environ, **extra),
    )
    return dist / NAME


def strip_binaries(folder: Path) -> None:
    """Drop debugging symbols from the shared libraries, except those that wheel repair tools
    bundled in ``<name>.libs`` folders (stripping numpy's OpenBLAS breaks its ELF layout)."""
    libraries = [
        p
        for p in (folder / "_internal").rglob("*.so*")
        if not p.is_symlink() and not any(part.endswith(".libs") for part in p.parts)
    ]
    print(f"+ strip --strip-unneeded ({len(libraries)} libraries)", flush=True)
    subprocess.run(["strip", "--strip-unneeded", *map(str, libraries)], check=True)


def archive(folder: Path, flavour: str) -> Path:
    """The folder as a .tar.xz, compressed by the xz program on every core where there is one
    (Python's lzma uses one core: the same bytes, twice the time on two cores)."""
    target = BUILD / f"{NAME}-{version()}-{flavour}-linux-x86_64.tar.xz"
    level = XZ_LEVELS[flavour]
    if shutil.which("xz") is None:
        with tarfile.open(target, "w:xz", preset=level) as tar:
            tar.add(folder, arcname=f"{NAME}-{flavour}")
        return target
    print(f"+ tar | xz -{level} --threads=0 > {target.name}", flush=True)
    with target.open("wb") as out:
        xz = subprocess.Popen(["xz", f"-{level}", "--threads=0"], stdin=subprocess.PIPE, stdout=out)
        with tarfile.open(fileobj=xz.stdin, mode="w|") as tar:
            tar.add(folder, arcname=f"{NAME}-{flavour}")
        xz.stdin.close()
        if xz.wait() != 0:
            raise subprocess.CalledProcessError(xz.returncode, "xz")
    return target


def installed_size_kib(root: Path) -> int:
    """The .deb's Installed-Size, counted as dpkg-gencontrol does: each regular file and each symlink
    itself rounded up to whole KiB, 1 KiB for anything else (a directory). Links are not followed,
    so the libraries that _internal links to are counted once."""
    total = 0
    for folder, dirs, files in os.walk(root):  # lists links to folders in dirs, never enters them
        for name in (*dirs, *files):
            info = os.lstat(os.path.join(folder, name))
            content = stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)
            total += -(-info.st_size // 1024) if content else 1
    return total


def deb(folder: Path, flavour: str, icons: Path) -> Path:
    """A .deb: the app under /opt/attention-lab, a command on PATH, a menu entry and an icon."""
    package = NAME if flavour == "full" else f"{NAME}-lite"
    other = f"{NAME}-lite" if flavour == "full" else NAME
    stage = BUILD / f"deb-{flavour}"
    if stage.exists():
        shutil.rmtree(stage)
    shutil.copytree(folder, stage / "opt" / NAME, symlinks=True)
    (stage / "usr" / "bin").mkdir(parents=True)
    (stage / "usr" / "bin" / NAME).symlink_to(f"/opt/{NAME}/{NAME}")
    apps = stage / "usr" / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copy(ROOT / "packaging" / f"{NAME}.desktop", apps)
    icon_dir = stage / "usr" / "share" / "icons" / "hicolor" / "256x256" / "apps"
    icon_dir.mkdir(parents=True)
    shutil.copy(icons / f"{NAME}.png", icon_dir)
    size_kb = installed_size_kib(stage)
    (stage / "DEBIAN").mkdir()
    (stage / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version()}\nArchitecture: amd64\n"
        f"Maintainer: Attention Lab developers <attention-lab@users.noreply.github.com>\n"
        f"Installed-Size: {size_kb}\nConflicts: {other}\nSection: education\nPriority: optional\n"
        f"Depends: {', '.join(SYSTEM_LIBRARIES)}\n"
        "Description: learn how transformer attention works by touching it\n"
        " Attention Lab steps through softmax(QK^T/sqrt(d_k))V one operation at a time,\n"
        " with live sliders, masks, positional encodings, cost and memory views"
        + (", and the heads of a real model, offline.\n" if flavour == "full" else ".\n"),
        encoding="utf-8",
    )
    target = BUILD / f"{package}_{version()}_amd64.deb"
    level = XZ_LEVELS[flavour]
    run("dpkg-deb", "--root-owner-group", "-Zxz", f"-z{level}", "--build", stage, target)  # on every core
    return target


def size(path: Path) -> str:
    total = (
        path.stat().st_size
        if path.is_file()
        else sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    )
    return f"{total / 2**20:.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavour", choices=("full", "lite"), required=True)
    parser.add_argument(
        "--torch", default="torch", help="torch requirement for the full flavour (default: torch)"
    )
    parser.add_argument(
        "--reuse-venv",
        action="store_true",
        help="keep an existing build/venv-<flavour> instead of starting clean",
    )
    parser.add_argument("--no-deb", action="store_true", help="skip the .deb")
    args = parser.parse_args()
    env = make_venv(args.flavour, args.torch, fresh=not args.reuse_venv)
    icons = render_icons(env / BIN / "python")
    smollm2 = convert_smollm2(env / BIN / "python") if args.flavour == "full" else None
    folder = freeze(env, args.flavour, icons, smollm2)
    if sys.platform.startswith("linux"):
        strip_binaries(folder)
    outputs = [folder, archive(folder, args.flavour)]
    if sys.platform.startswith("linux") and not args.no_deb:
        outputs.append(deb(folder, args.flavour, icons))
    for path in outputs:
        print(f"{size(path):>8}  {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
