"""Real trained models: load one offline and read every head's attention weights.

    model = load_model("minilm")            # the bundled all-MiniLM-L6-v2, "smollm2", or a folder
    result = run(model, "The trophy didn't fit in the suitcase because it was too big.")
    result.attentions.shape                 # (6, 12, 17, 17) = (layers, heads, T, T)
    find_head(result, "it", "trophy").best  # layer 4, head 2: 0.58 (printed 1-based)

torch and transformers are imported inside the functions that need them, after the Hugging Face
hub has been switched off, so importing this module is cheap and never touches the network.
Only safetensors weights are read; pickled weights and custom model code are refused.
A folder saved from a causal language model (``…ForCausalLM``, ``…LMHeadModel``) loads as a
decoder with its language-model head, so core.decoder can read its next-token predictions.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

import numpy as np

from core.decoder.families import family_of
from core.decoder.windows import sliding_layers
from core.free_memory import available_memory
from core.models import gguf_convert, smollm2
from core.models.attention_run import run
from core.models.heavy_load import run_frozen
from core.models.kinds import DECODER, LoadedModel, check_kind
from core.models.libraries import libraries
from core.models.registry import ADDED, BUNDLED, kind_of, resolve

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
MEMORY_FACTOR = 1.5  # weights + the attention maps and activations of one run
FLOAT32 = 4  # bytes per number as the models are run
Progress = Callable[[int, int], None]


def check_folder(folder: Path) -> list[Path]:
    """The folder's safetensors files; ValueError with a reason for a folder that is not a safe,
    loadable model."""
    if not (folder / "config.json").is_file():
        raise ValueError(
            f"'{folder}' is not a model folder: it has no config.json. "
            "Choose the folder a Hugging Face model was saved in."
        )
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        pickled = [p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES]
        if pickled:
            raise ValueError(
                f"'{folder}' has only pickled weights ({', '.join(pickled)}). Loading a "
                "pickle can run any code hidden in it, so Attention Lab reads safetensors only. "
                "Convert it once, e.g. model.save_pretrained(folder, safe_serialization=True)."
            )
        raise ValueError(f"'{folder}' has no weights file (*.safetensors).")
    broken = [p.name for p in weights if not p.exists()]
    if broken:
        raise ValueError(
            f"'{folder}' links to weights that are not there ({', '.join(broken)}): a download cut short."
        )
    return weights


def parameter_count(weights: list[Path], hint: str = "") -> int:
    """Numbers stored in the safetensors files, read from their headers (no weights loaded);
    ValueError (ending in ``hint``) for a damaged file."""
    from safetensors import safe_open

    total = 0
    for path in weights:
        try:
            with safe_open(path, framework="np") as f:
                total += sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())  # noqa: SIM118
        except Exception as exc:  # a damaged header raises several kinds of errors
            raise ValueError(
                f"The weights in '{path.parent}' could not be read: {path.name}: {exc}{hint}"
            ) from exc
    return total


def check_memory(name: str, parameters: int, memory_limit: int | None = None) -> None:
    """Refuse, with the numbers, a model whose float32 weights and one run do not fit in memory."""
    need = parameters * FLOAT32 * MEMORY_FACTOR
    limit = available_memory() if memory_limit is None else memory_limit
    if limit is not None and need > limit:
        raise ValueError(
            f"{name} has {parameters / 1e6:,.0f} M parameters: {parameters * FLOAT32 / 2**30:.1f} GiB "
            f"in float32 as Attention Lab runs it, about {need / 2**30:.1f} GiB with one run, and only "
            f"{limit / 2**30:.1f} GiB of memory is free. Choose a smaller model or close other programs."
        )


def load_model(
    source: str | os.PathLike = BUNDLED,
    progress: Progress | None = None,
    memory_limit: int | None = None,
    expect: str | None = None,
) -> LoadedModel:
    """Load ``source`` ("minilm" = the bundled all-MiniLM-L6-v2, "smollm2" once added, a local
    Hugging Face folder, or the id of a model in the local Hugging Face cache).

    Offline always, eager attention, float32, safetensors only, no custom code. ``progress(done,
    total)`` is called between the five steps; raising from it cancels the load. ``memory_limit``
    (bytes) replaces the measured free memory in the size check. ``expect`` (ENCODER or DECODER)
    refuses the other kind, with a reason, before the weights are read. A decoder must be of a
    supported family, and its adapter must reproduce transformers' logits (``matches``).
    """
    steps = 5
    tick = progress or (lambda done, total: None)
    tick(0, steps)
    folder, name = resolve(source)
    weights = check_folder(folder)
    torch, transformers = libraries()
    added = next((m for m in ADDED if str(source) == m.KEY), None)  # a folder this app wrote
    hint = "" if added is None else f"; {added.ADD_HINT} to replace it"
    check_memory(name, parameter_count(weights, hint), memory_limit)
    tick(1, steps)
    config, kind = run_frozen(_read_config, transformers, folder)  # see core.models.heavy_load
    if expect is not None:
        check_kind(name, kind, expect)
    family = family_of(config.model_type).name if kind == DECODER else ""  # refuses the unsupported
    tick(2, steps)
    tokenizer = _tokenizer(transformers, folder, whole=added is not None)
    if str(source) == smollm2.KEY:
        gguf_convert.list_added_tokens(folder, tokenizer)  # a folder converted by an older version
    tick(3, steps)
    module = _weights(transformers, torch, folder, config, kind, hint)
    tick(4, steps)
    max_tokens = _max_tokens(config, tokenizer)
    n_heads = config.num_attention_heads
    n_kv = getattr(config, "num_key_value_heads", None) or n_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_heads
    window, sliding = sliding_layers(config.to_dict()) if kind == DECODER else (None, ())
    model = LoadedModel(
        module, tokenizer, name, str(source), config.num_hidden_layers,
        n_heads, max_tokens, is_causal=False, kind=kind, n_kv_heads=n_kv, head_dim=head_dim, family=family,
        window=window, sliding=sliding, origin="" if added is None else added.ORIGIN,
    )  # fmt: skip
    probe = run(model, "one two three four")
    matches = _matches(model) if kind == DECODER else None
    tick(5, steps)
    return replace(model, is_causal=_looks_causal(probe.attentions), matches=matches)


def _weights(transformers, torch, folder: Path, config, kind: str, hint: str):
    """The model built from ``folder``'s weights, which must fill every tensor its config asks for."""
    auto = transformers.AutoModelForCausalLM if kind == DECODER else transformers.AutoModel
    try:
        module, info = auto.from_pretrained(
            folder,
            config=config,
            local_files_only=True,
            trust_remote_code=False,
            use_safetensors=True,
            attn_implementation="eager",
            dtype=torch.float32,
            output_loading_info=True,
        )
    except Exception as exc:  # a damaged file raises many kinds of errors; all mean the same
        raise ValueError(f"The weights in '{folder}' could not be read: {exc}{hint}") from exc
    unfilled = sorted(info.get("missing_keys") or ()) + sorted(
        k for k, *_ in info.get("mismatched_keys") or ()
    )
    if unfilled:
        raise ValueError(
            f"The weights in '{folder}' do not fit its config.json: {len(unfilled)} tensors are missing "
            f"or of another shape (first: {unfilled[0]}){hint}."
        )
    return module.eval()


def _matches(model: LoadedModel) -> float:
    """The largest logit difference between the adapter's readout and transformers' own run of a
    short text; ValueError over ``adapter.LIMIT``."""
    from core.decoder.adapter import CHECK_TEXT, LIMIT, readout_error

    ids = model.tokenizer(CHECK_TEXT)["input_ids"][: max(2, min(model.max_tokens, 64))]
    error = readout_error(model.module, ids)
    if not error <= LIMIT:
        raise ValueError(
            f"{model.name}: Attention Lab's reading of the model differs from transformers' logits by "
            f"{error:.2g} (more than {LIMIT:g}), so its numbers could not be trusted; it was not opened."
        )
    return error


def _read_config(transformers, folder: Path):
    """(config, kind) of the model in ``folder``, with the module that defines its class imported,
    so that building the model (never frozen: it is dropped later) imports nothing more."""
    config = _config(transformers, folder)
    kind = kind_of(config.architectures)
    mapping = transformers.MODEL_FOR_CAUSAL_LM_MAPPING if kind == DECODER else transformers.MODEL_MAPPING
    with suppress(KeyError):  # a kind of model transformers does not know: from_pretrained says so
        mapping[type(config)]
    return config, kind


def _config(transformers, folder: Path):
    try:
        config = transformers.AutoConfig.from_pretrained(
            folder, local_files_only=True, trust_remote_code=False
        )
    except Exception as exc:
        raise ValueError(
            f"The config.json in '{folder}' is not one Attention Lab can read ({exc}). "
            "Models that need their own code are never run."
        ) from exc
    layers = getattr(config, "num_hidden_layers", None)
    heads = getattr(config, "num_attention_heads", None)
    if not (isinstance(layers, int) and isinstance(heads, int) and layers > 0 and heads > 0):
        raise ValueError(
            f"The config in '{folder}' describes no attention layers "
            "(it needs num_hidden_layers and num_attention_heads)."
        )
    return config


def _tokenizer(transformers, folder: Path, whole: bool = False):
    """``whole``: the folder's tokenizer.json is complete (the app wrote it), so it is read as it
    is rather than rebuilt by the family's tokenizer class: Gemma 3's 262,144 tokens then take
    1.3 s instead of 2.0 s, with the same pieces."""
    reader = transformers.PreTrainedTokenizerFast if whole else transformers.AutoTokenizer
    try:
        tokenizer = reader.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        raise ValueError(f"'{folder}' has no tokenizer Attention Lab can read: {exc}") from exc
    if not tokenizer("one two", add_special_tokens=False)["input_ids"]:
        raise ValueError(f"'{folder}' has no tokenizer: save one beside the weights (tokenizer.json).")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"'{folder}' has only a slow tokenizer; save it with tokenizer.json "
            "(a fast tokenizer), which tells which word each piece belongs to."
        )
    return tokenizer


def _max_tokens(config, tokenizer) -> int:
    """The longest input the model takes: its position table, or the tokenizer's limit."""
    limits = [
        getattr(config, "max_position_embeddings", None),
        getattr(tokenizer, "model_max_length", None),
    ]
    usable = [n for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return min(usable) if usable else 512


def _looks_causal(attentions: np.ndarray) -> bool:
    """(L, H, T, T) -> True when every weight above the diagonal is exactly zero."""
    upper = np.triu(np.ones(attentions.shape[-2:], dtype=bool), k=1)
    return bool(upper.any()) and not np.any(attentions[..., upper])
