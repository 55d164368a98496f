"""Run a loaded model over a text (or a sentence pair) and keep every head's attention weights.

result = run(model, TROPHY)            # the first article's sentence
result.attentions.shape                 # (6, 12, 17, 17) = (layers, heads, T, T)
"""

from __future__ import annotations

import numpy as np

from core.maths.head_analysis import ModelAttention
from core.models.kinds import LoadedModel
from core.models.libraries import libraries

TROPHY = "The trophy didn't fit in the suitcase because it was too big."


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
