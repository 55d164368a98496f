"""One converter for GGUF files: a quantised llama.cpp file de-quantised into a Hugging Face
folder (float16 safetensors, computed in float32 when loaded) that transformers loads as it is.

    check_converter()                       # before downloading: torch, transformers, gguf, accelerate
    with read_once(path):                   # one parse of the file serves every reading of it
        model, tokenizer = convert(path, alive)  # alive(text) after each step and tensor; may cancel
    save(model, tokenizer, folder)

transformers reads the tokenizer and the settings from the file; the weights are de-quantised
here one tensor at a time with the ``gguf`` package, as transformers' own GGUF loader does (the
same functions, the same weights, without its name look-up that costs half a minute per load),
so each one can be counted and the time left measured. What llama.cpp's converter changed on the
way in is undone as transformers undoes it (``_as_transformers``).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.models.fetch import Rate, about

ARCHITECTURES = {"gemma3_text": "gemma3"}  # transformers' model type -> gguf's name, where they differ


def check_converter() -> None:
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


@contextmanager
def read_once(gguf: Path) -> Iterator[None]:
    """Within it, every reading of ``gguf`` (transformers' settings, tokenizer and model loads, and
    the conversion's own) shares one ``gguf.GGUFReader``: parsing the file's header takes about
    13 s for Gemma 3's 262,144-token vocabulary, each time. A reader is a read-only memory map,
    so sharing it changes nothing read; transformers imports the class when it reads a file."""
    import gguf as package

    plain, readers = package.GGUFReader, {}

    def shared(path, mode="r"):
        if Path(path).resolve() != gguf.resolve():
            return plain(path, mode)
        if mode not in readers:
            readers[mode] = plain(path, mode)
        return readers[mode]

    package.GGUFReader = shared
    try:
        yield
    finally:
        package.GGUFReader = plain
        readers.clear()  # the memory map goes with its last user


def convert(gguf: Path, alive: Callable[..., None]):
    """(model, tokenizer): ``gguf`` de-quantised into a plain float32 model.

    transformers reads the tokenizer and the settings from the file; the weights are
    de-quantised here one tensor at a time with the ``gguf`` package, as transformers' own GGUF
    loader does, so each one can be counted and the time left measured.
    """
    from core.models.libraries import libraries

    _, transformers = libraries()
    alive("reading the tokenizer from the file")
    tokenizer = _converting(
        gguf, transformers.AutoTokenizer.from_pretrained, gguf.parent, gguf_file=gguf.name
    )
    model = empty_model(gguf, alive)
    weights = dequantised(gguf, model, alive)
    alive("putting the weights into the model")
    missing, unexpected = model.load_state_dict(weights, strict=False)
    tied = set(_tied_keys(model)) if model.config.tie_word_embeddings else set()
    missing = [key for key in missing if key not in tied]  # filled by the embedding they are tied to
    if missing or unexpected:
        raise ValueError(
            f"{gguf.name} could not be converted ({len(missing)} weights missing, {len(unexpected)} "
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


def empty_model(gguf: Path, alive: Callable[..., None]):
    """The float32 model of the shape ``gguf``'s settings give, its weights not yet put in (the
    output tied to the embedding where the file says so)."""
    from core.models.libraries import libraries

    torch, transformers = libraries()
    alive("reading the model's settings from the file")
    config = _converting(gguf, transformers.AutoConfig.from_pretrained, gguf.parent, gguf_file=gguf.name)
    settings = config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
        settings.pop(key, None)
    alive("building an empty model of that shape")
    with _no_random_weights():  # every weight is overwritten next
        model = _converting(
            gguf,
            transformers.AutoModelForCausalLM.from_config,
            type(config).from_dict(settings),
            dtype=torch.float32,
        )
    model.tie_weights()
    return model


def _converting(gguf: Path, step: Callable, *args, **kwargs):
    """``step(*args, **kwargs)``; whatever it raises means the file ``gguf`` cannot be converted (a
    damaged GGUF fails in many ways). Progress calls stay outside, so that a cancel stays a cancel."""
    try:
        return step(*args, **kwargs)
    except Exception as exc:
        raise ValueError(f"{gguf.name} could not be converted ({exc}); run the add again.") from exc


def _tied_keys(model) -> list[str]:
    """The names of the output weights that are the embedding's own tensor (tied to it)."""
    out = model.get_output_embeddings()
    embedding = model.get_input_embeddings()
    if out is None or embedding is None or out.weight is not embedding.weight:
        return []
    return [name for name, p in model.named_parameters(remove_duplicate=False) if p is out.weight]


def dequantised(gguf: Path, model, alive: Callable[..., None]) -> dict:
    """{transformers name: float32 tensor} for every tensor of ``gguf`` that ``model`` has,
    de-quantised one at a time; ``alive(text)`` after each, with the time left measured from the
    share of the weights done so far."""
    import numpy as np
    import torch
    from gguf import MODEL_ARCH_NAMES, GGUFReader, dequantize, get_tensor_name_map

    alive("reading the file's table of tensors")
    reader = _converting(gguf, GGUFReader, gguf)
    names = _gguf_names(gguf, model, MODEL_ARCH_NAMES, get_tensor_name_map)
    tensors = list(reader.tensors)
    heads, kv_heads = model.config.num_attention_heads, model.config.num_key_value_heads
    kind = model.config.model_type
    meter = Rate(sum(int(t.n_elements) for t in tensors), "weights")
    done, weights = 0, {}
    for number, tensor in enumerate(tensors, 1):
        values = _converting(gguf, dequantize, tensor.data, tensor.tensor_type)
        values = _as_transformers(values, tensor.name, kind, heads, kv_heads)
        if tensor.name in names:
            weights[names[tensor.name]] = torch.from_numpy(np.copy(values)).to(torch.float32)
        done += int(tensor.n_elements)
        left = meter.left_s(done)
        share = f"tensor {number} of {len(tensors)} ({done / meter.total:.0%} of the weights)"
        alive(share + (f", {about(left)}" if left is not None else ""))
    return weights


def _gguf_names(gguf: Path, model, arch_names: dict, name_map) -> dict[str, str]:
    """{GGUF tensor name: transformers name} for ``model``'s weights, from gguf's name table (what
    transformers' GGUF loader looks up, once here rather than once per module)."""
    kind = model.config.model_type
    arch = next((key for key, value in arch_names.items() if value == ARCHITECTURES.get(kind, kind)), None)
    if arch is None:
        raise ValueError(f"{gguf.name} could not be converted: the gguf package has no {kind!r} models")
    table = name_map(arch, model.config.num_hidden_layers)
    names = {}
    for hf_name in model.state_dict():
        stem, dot, suffix = hf_name.rpartition(".")
        gguf_name = table.get_name(stem) if suffix in ("weight", "bias") else None
        if gguf_name is not None:
            names[f"{gguf_name}{dot}{suffix}"] = hf_name
    return names


def _as_transformers(values, name: str, kind: str, heads: int, kv_heads: int):
    """A de-quantised tensor as transformers keeps it, undoing what llama.cpp's converter changed
    (as transformers' own GGUF loader does): Llama's query and key rows reordered; Gemma 2 and
    3's norm weights stored as 1 + weight."""
    if kind == "llama" and ".attn_q." in name:
        return _unpermute(values, heads)
    if kind == "llama" and ".attn_k." in name:
        return _unpermute(values, kv_heads)
    if kind in ("gemma2", "gemma3_text") and "norm.weight" in name:
        return values - 1
    return values


def _unpermute(weights, heads: int):
    """Undo the row order llama.cpp's converter gives the query and key weights (its
    ``permute``), as transformers' GGUF loader does."""
    dim = weights.shape[0] // heads // 2
    w = weights.reshape(heads, dim, 2, *weights.shape[1:])
    return w.swapaxes(2, 1).reshape(weights.shape)


def save(model, tokenizer, out: Path) -> None:
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
