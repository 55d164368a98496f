"""The models in the local Hugging Face cache, read in place and never downloaded.

    for cached in cached_models():          # HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub
        cached.repo_id, cached.folder, cached.missing   # "gpt2", its snapshot, () when complete

The cache keeps each model as ``models--org--name/`` with ``refs/main`` naming the snapshot
``snapshots/<commit>/``, whose files link to ``blobs/``. A snapshot is complete when its
config, tokenizer and every safetensors weight file it names are there; what is not is listed
in ``missing`` (a download cut short leaves a broken link or a ``.incomplete`` blob). Reading
the layout directly keeps a listing cheap: no hub client, no torch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

WEIGHTS_INDEX = "model.safetensors.index.json"
TOKENIZER_FILES = ("tokenizer.json",)


def cache_folder() -> Path:
    """Where the Hugging Face hub keeps models, by the hub's own rules."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()
    return base / "huggingface" / "hub"


@dataclass(frozen=True)
class CachedModel:
    repo_id: str  # "gpt2", "EleutherAI/pythia-70m"
    folder: Path  # the snapshot the main branch points at (or the newest one)
    missing: tuple[str, ...]  # what a complete model still needs, e.g. "model.safetensors (blob missing)"

    @property
    def complete(self) -> bool:
        return not self.missing


def cached_models(cache: Path | None = None) -> list[CachedModel]:
    """Every model repository in ``cache`` (default: ``cache_folder()``), sorted by id."""
    root = cache_folder() if cache is None else Path(cache)
    if not root.is_dir():
        return []
    found = []
    for repo in sorted(root.glob("models--*")):
        snapshot = _snapshot(repo)
        repo_id = repo.name.removeprefix("models--").replace("--", "/")
        if snapshot is None:
            found.append(CachedModel(repo_id, repo / "snapshots", ("every file (no snapshot)",)))
        else:
            found.append(CachedModel(repo_id, snapshot, _missing(repo, snapshot)))
    return found


def find(repo_id: str, cache: Path | None = None) -> CachedModel | None:
    """The cached model ``repo_id`` names (case-insensitive), or None."""
    wanted = repo_id.strip().lower()
    return next((m for m in cached_models(cache) if m.repo_id.lower() == wanted), None)


def _snapshot(repo: Path) -> Path | None:
    """The snapshot ``refs/main`` names, else the most recently written one."""
    try:
        commit = (repo / "refs" / "main").read_text().strip()
        if (repo / "snapshots" / commit).is_dir():
            return repo / "snapshots" / commit
    except OSError:
        pass
    snapshots = [p for p in (repo / "snapshots").glob("*") if p.is_dir()]
    return max(snapshots, key=lambda p: p.stat().st_mtime) if snapshots else None


def _missing(repo: Path, snapshot: Path) -> tuple[str, ...]:
    """What the snapshot lacks to be loaded: config, tokenizer, weights, or a blob behind a link."""
    broken = _broken(snapshot)
    missing = [f"{name} (blob missing)" for name in broken]
    if not (snapshot / "config.json").is_file() and "config.json" not in broken:
        missing.append("config.json")
    if not any((snapshot / name).is_file() or name in broken for name in TOKENIZER_FILES):
        missing.append("tokenizer.json")
    weights = _weights_named(snapshot)
    if not weights:
        missing.append("*.safetensors weights")
    missing += [
        f"{w} (not downloaded)"
        for w in weights
        if not (snapshot / w).exists() and not (snapshot / w).is_symlink()
    ]
    if any((repo / "blobs").glob("*.incomplete")):
        missing.append("a download still in progress or cut short (.incomplete blob)")
    return tuple(dict.fromkeys(missing))


def _broken(snapshot: Path) -> list[str]:
    """Files of the snapshot whose link points at a blob that is not there."""
    return sorted(p.name for p in snapshot.iterdir() if p.is_symlink() and not p.exists())


def _weights_named(snapshot: Path) -> list[str]:
    """The safetensors files the snapshot needs: the shards its index names, else those present."""
    index = snapshot / WEIGHTS_INDEX
    if index.is_file():
        try:
            return sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError):
            return []  # an unreadable index: listed as missing weights
    return sorted(p.name for p in snapshot.glob("*.safetensors"))
