"""Which layers of a decoder attend through a sliding window, read from its config.json.

    window, layers = sliding_layers(config)   # e.g. (512, (0, 1, 2, 3, 4, 6, …)) for Gemma 3 270M

Recent configs list ``layer_types`` ("sliding_attention" or "full_attention" per layer). Older
ones are read the way their family's code reads them: Qwen 2 and 3 slide from ``max_window_layers``
on, Gemma 2 on every other layer, Gemma 3 on all but every ``sliding_window_pattern``-th, and the
rest (Mistral, Phi-3) on every layer.
"""

from __future__ import annotations


def sliding_layers(config: dict) -> tuple[int | None, tuple[int, ...]]:
    """(window, the 0-based layers that use it) from a config dict; (None, ()) when none does."""
    window = config.get("sliding_window")
    n = config.get("num_hidden_layers") or 0
    if not isinstance(window, int) or window <= 0 or config.get("use_sliding_window") is False:
        return None, ()
    types = config.get("layer_types")
    kind = config.get("model_type", "")
    if isinstance(types, list):
        layers = [i for i, t in enumerate(types) if t == "sliding_attention"]
    elif kind in ("qwen2", "qwen3"):
        layers = range(config.get("max_window_layers", n), n)
    elif kind == "gemma2":
        layers = range(0, n, 2)
    elif kind in ("gemma3", "gemma3_text"):
        pattern = config.get("sliding_window_pattern") or config.get("_sliding_window_pattern") or 6
        layers = [i for i in range(n) if (i + 1) % pattern]
    else:
        layers = range(n)
    layers = tuple(layers)
    return (window, layers) if layers else (None, ())


def window_sentence(name: str, window: int, layers: tuple[int, ...], total: int) -> str:
    """One sentence for people (layers counted from 1): "Gemma-3-270M: a window of 512 tokens on
    15 of its 18 layers (layers 6, 12 and 18 see the whole text)." """
    if len(layers) == total:
        return f"{name}: a window of {window:,} tokens on every one of its {total} layers."
    full = [str(i + 1) for i in range(total) if i not in layers]
    listed = ", ".join(full[:-1]) + f" and {full[-1]}" if len(full) > 1 else full[0]
    return (
        f"{name}: a window of {window:,} tokens on {len(layers)} of its {total} layers "
        f"(layer{'s' if len(full) > 1 else ''} {listed} {'see' if len(full) > 1 else 'sees'} the whole text)."
    )
