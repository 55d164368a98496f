"""Every model Attention Lab knows: the bundled MiniLM, SmolLM2 (once added) and folders opened before.

    for entry in known_models(recent_folders):
        print(entry.key, entry.kind, entry.layers, entry.heads, entry.installed)

Read from each folder's config.json alone, so listing never imports torch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from core import models, smollm2


@dataclass(frozen=True)
class Entry:
    key: str  # what --model and load_model take: "minilm", "smollm2" or a folder
    name: str
    kind: str  # "encoder", "decoder" or "unknown" (no readable config)
    layers: int | None
    heads: int | None
    kv_heads: int | None  # fewer than heads: grouped-query attention
    path: str | None  # None while not installed
    installed: bool

    def as_dict(self) -> dict:
        return asdict(self)


def describe(key: str, name: str, folder: Path | None) -> Entry:
    """An Entry from ``folder``'s config.json (kind "unknown" when it cannot be read)."""
    try:
        config = json.loads((folder / "config.json").read_text()) if folder else None
    except (OSError, ValueError):
        config = None
    if not isinstance(config, dict):
        return Entry(key, name, "unknown", None, None, None, str(folder) if folder else None, False)
    layers, heads = config.get("num_hidden_layers"), config.get("num_attention_heads")
    kv = config.get("num_key_value_heads") or heads
    kind = models.kind_of(config.get("architectures"))
    return Entry(key, name, kind, layers, heads, kv, str(folder), True)


def known_models(recent: Iterable[str] = ()) -> list[Entry]:
    """The bundled model, SmolLM2 and each folder in ``recent`` that still exists."""
    try:
        bundled = describe(models.BUNDLED, "all-MiniLM-L6-v2", models.resolve(models.BUNDLED)[0])
    except models.ModelsExtraMissing:
        bundled = Entry(models.BUNDLED, "all-MiniLM-L6-v2", "encoder", 6, 12, 12, None, False)
    added = smollm2.installed_folder()
    if added is not None:
        smol = describe(smollm2.KEY, smollm2.NAME, added)
    else:
        heads = (smollm2.LAYERS, smollm2.HEADS, smollm2.KV_HEADS)
        smol = Entry(smollm2.KEY, smollm2.NAME, models.DECODER, *heads, None, False)
    entries = [bundled, smol]
    for folder in dict.fromkeys(recent):
        if Path(folder).is_dir():
            entries.append(describe(folder, Path(folder).name, Path(folder)))
    return entries
