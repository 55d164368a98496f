"""One decoder's parts under the same names for every family (see ``core.decoder.families``).

    adapter = adapter_of(module)        # module: a transformers …ForCausalLM
    adapter.shape                       # layers, heads, kv_heads, head_dim, hidden, vocab
    adapter.blocks[l]                   # block l; its input is the residual stream before it
    adapter.attention(l), adapter.mlp(l), adapter.out_weight(l)   # (hidden, heads · head_dim)
    adapter.pre_norm(l), adapter.mlp_norm(l)     # the norms attention and the MLP read through
    adapter.after_norm(l, "attn")       # the norm on a part's output before the stream (Gemma 2, 3)
    adapter.qkv_weight(l, "q", h)       # (head_dim, hidden) weight, (head_dim,) bias or None
    adapter.rotate(l, x, cos, sin), adapter.scaling(l), adapter.score_cap(l)
    adapter.readout(hidden)             # (…, hidden) -> (…, vocab): final norm, unembedding, cap
    adapter.logits_of(normed)           # the same from the final norm's output

The first ``adapter_of`` switches the model's attention to ``hooks.attention_lab``, the family's
own eager attention with taps around it, so every view can read each head's queries, keys,
values, weights and output. ``readout_error`` checks the adapter against transformers' logits.
"""

from __future__ import annotations

import sys
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.decoder import hooks
from core.decoder.families import Family, family_of
from core.decoder.windows import sliding_layers

__all__ = [
    "LIMIT", "Adapter", "DecoderShape", "adapter_of", "readout_error", "tap_attention", "transformers_own",
]  # fmt: skip

LIMIT = 1e-3  # the largest logit difference from transformers a model may have and still load
CHECK_TEXT = "The quick brown fox jumps over the lazy dog."
_adapters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(frozen=True)
class DecoderShape:
    """What the views and hooks need to know about a decoder's size."""

    layers: int
    heads: int  # query heads per layer
    kv_heads: int  # key/value heads per layer (fewer than ``heads``: grouped-query attention)
    head_dim: int
    hidden: int = 0
    vocab: int = 0


def _part(root: Any, path: str) -> Any:
    for name in path.split("."):
        root = getattr(root, name)
    return root


class Adapter:
    """Where ``module`` (a causal language model of a supported family) keeps each part."""

    def __init__(self, module: Any):
        config = module.config
        self.family: Family = family_of(getattr(config, "model_type", None))
        self.module = module
        try:
            self.blocks = list(_part(module, self.family.blocks))
            self.final_norm = _part(module, self.family.final_norm)
            self.unembed = module.get_output_embeddings()
            self.unembed.weight  # noqa: B018  (None or a module without weights: no language-model head)
            attention = _part(self.blocks[0], self.family.attention)
        except (AttributeError, IndexError, TypeError) as exc:
            raise ValueError(
                f"This needs a {self.family.name} decoder with a language-model head; "
                f"{type(module).__name__} is not one (load it as a causal language model)."
            ) from exc
        if not hasattr(sys.modules[type(attention).__module__], "eager_attention_forward"):
            raise ValueError(
                f"{type(attention).__name__} computes attention in a way that cannot return its "
                "weights here (no eager attention in this version of transformers)."
            )
        self.body = module.base_model
        heads = config.num_attention_heads
        self.shape = DecoderShape(
            layers=len(self.blocks),
            heads=heads,
            kv_heads=getattr(config, "num_key_value_heads", None) or heads,
            head_dim=getattr(config, "head_dim", None) or config.hidden_size // heads,
            hidden=config.hidden_size,
            vocab=self.unembed.out_features,
        )
        self.softcap = getattr(config, "final_logit_softcapping", None)
        self.sandwiched = config.model_type in self.family.after_norms_in
        self.parallel = bool(getattr(config, "use_parallel_residual", False))  # MLP reads the block's input
        window, sliding = sliding_layers(config.to_dict())
        self.windows = [window if n in sliding else None for n in range(self.shape.layers)]  # per layer

    def attention(self, layer: int) -> Any:
        return _part(self.blocks[layer], self.family.attention)

    def mlp(self, layer: int) -> Any:
        return _part(self.blocks[layer], self.family.mlp)

    def mlp_down(self, layer: int) -> Any:
        """``layer``'s MLP's last projection, whose input is the MLP's neurons."""
        return _part(self.blocks[layer], self.family.mlp_down)

    def out_proj(self, layer: int) -> Any:
        return _part(self.blocks[layer], self.family.out_proj)

    def out_weight(self, layer: int) -> Any:
        """(hidden, heads · head_dim) torch: head h writes z_h @ W[:, h·d:(h+1)·d]ᵀ."""
        weight = self.out_proj(layer).weight
        return weight.T if self.family.conv1d else weight

    def pre_norm(self, layer: int) -> Any:
        """The norm ``layer``'s attention reads the stream through."""
        return _part(self.blocks[layer], self.family.pre_norm)

    def mlp_norm(self, layer: int) -> Any:
        """The norm ``layer``'s MLP reads the stream through."""
        family = self.family
        return _part(self.blocks[layer], family.sandwich_mlp_norm if self.sandwiched else family.mlp_norm)

    def after_norm(self, layer: int, part: str) -> Any:
        """The norm on ``layer``'s attention ("attn") or MLP ("mlp") output before it joins the
        stream (Gemma 2 and 3), or None."""
        if not self.sandwiched:
            return None
        return _part(self.blocks[layer], self.family.after_norms[part == "mlp"])

    def qkv_weight(self, layer: int, which: str, head: int) -> tuple[Any, Any]:
        """Query head ("q"), key ("k") or value ("v") head ``head``'s projection: (head_dim, hidden)
        weight and (head_dim,) bias or None, rows of the fused projection where the family fuses them."""
        shape, family, kind = self.shape, self.family, "qkv".index(which)
        attention = self.attention(layer)
        if family.qkv is None:
            linear, first = getattr(attention, family.projections[kind]), head
        else:
            linear = _part(attention, family.qkv)
            blocks = (0, shape.heads, shape.heads + shape.kv_heads)  # [all q | all k | all v]
            first = 3 * head + kind if family.qkv_by_head else blocks[kind] + head
        rows = slice(first * shape.head_dim, (first + 1) * shape.head_dim)
        weight = linear.weight.T if family.conv1d else linear.weight
        return weight[rows], None if linear.bias is None else linear.bias[rows]

    def head_norm(self, layer: int, which: str) -> Any:
        """The norm on each head's query ("q") or key ("k") before rotary (Qwen3, Gemma 3), or None."""
        return getattr(self.attention(layer), self.family.head_norms["qk".index(which)], None)

    def rotate(self, layer: int, x: Any, cos: Any, sin: Any) -> Any:
        """(…, heads, T, head_dim) rotated by the family's own rotary function (cos, sin broadcast)."""
        own = sys.modules[type(self.attention(layer)).__module__].apply_rotary_pos_emb
        return own(x, x, cos, sin)[0]

    def scaling(self, layer: int) -> float:
        """What ``layer``'s q·k is multiplied by before the softmax."""
        return float(getattr(self.attention(layer), "scaling", self.shape.head_dim**-0.5))

    def score_cap(self, layer: int) -> float | None:
        """c in c·tanh(score/c), the cap on ``layer``'s scores (Gemma 2), or None."""
        cap = getattr(self.attention(layer), "attn_logit_softcapping", None)
        return None if cap is None else float(cap)

    def readout(self, hidden: Any) -> Any:
        """(…, hidden) residual stream -> (…, vocab) logits: the final norm, the unembedding and,
        where the model caps its logits, the cap."""
        return self.logits_of(self.final_norm(hidden))

    def logits_of(self, normed: Any) -> Any:
        """(…, hidden) final norm's output -> (…, vocab) logits: the unembedding and the cap."""
        return self.capped(self.unembed(normed))

    def capped(self, logits: Any) -> Any:
        """``logits`` with the model's final soft cap applied (unchanged when it has none)."""
        import torch

        if not self.softcap:
            return logits
        return torch.tanh(logits / self.softcap) * self.softcap

    def token_logits(self, normed: Any, ids: list[int]) -> Any:
        """(…, len(ids)): the logits of only the tokens ``ids`` from final-normed hidden states."""
        weight = self.unembed.weight[ids].float()
        logits = normed.float() @ weight.T
        bias = getattr(self.unembed, "bias", None)
        return self.capped(logits if bias is None else logits + bias[ids].float())


def adapter_of(module: Any) -> Adapter:
    """The adapter of ``module``, made once; from then on its attention runs through the taps.
    ValueError, naming the supported families, for a model the adapters do not read."""
    with _lock:
        adapter = _adapters.get(module)
        if adapter is None:
            adapter = Adapter(module)
            tap_attention(module)
            _adapters[module] = adapter
    return adapter


def tap_attention(module: Any) -> None:
    """Run ``module``'s attention (a decoder's or an encoder's) through ``hooks.attention_lab``."""
    if module.config._attn_implementation != hooks.NAME:
        _register()
        _use_attention(module, hooks.NAME)


def _register() -> None:
    """Make ``hooks.attention_lab`` an attention implementation transformers accepts by name."""
    from transformers import AttentionInterface

    AttentionInterface.register(hooks.NAME, hooks.attention_lab)
    try:
        from transformers.masking_utils import AttentionMaskInterface, eager_mask
    except ImportError:  # older transformers build the eager mask for any implementation
        return
    AttentionMaskInterface.register(hooks.NAME, eager_mask)


def _use_attention(module: Any, name: str) -> None:
    if hasattr(module, "set_attn_implementation"):
        module.set_attn_implementation(name)
    else:
        module.config._attn_implementation = name


@contextmanager
def transformers_own(module: Any):
    """Inside the block, ``module`` runs transformers' own eager attention, with no taps."""
    _use_attention(module, "eager")
    try:
        yield
    finally:
        _use_attention(module, hooks.NAME)


def readout_error(module: Any, ids: list[int]) -> float:
    """The largest difference between transformers' logits at the last of ``ids`` and the
    adapter's: the residual stream after the last block, as the hooks read it, through ``readout``
    (every earlier position reaches the last through attention; a 262,144-token vocabulary read at
    one position costs a tenth of one read at every position)."""
    import torch

    adapter = adapter_of(module)
    tokens = torch.tensor([ids])
    with torch.inference_mode():
        with transformers_own(module):
            expected = module(input_ids=tokens, use_cache=False, logits_to_keep=1).logits[0, -1].float()
        with hooks.recording(adapter.blocks[-1:]) as seen:
            adapter.body(input_ids=tokens, use_cache=False)
        mine = adapter.readout(seen[0][..., -1, :]).float()
    return float((mine - expected).abs().max())


def norm_eps(norm: Any) -> float:
    """The eps a norm module adds under its square root."""
    return float(getattr(norm, "variance_epsilon", None) or getattr(norm, "eps", 1e-6))


def norm_scale(norm: Any, x: Any) -> Any:
    """(…, hidden) -> (…, 1): what ``norm`` divides ``x`` by, √(mean square + eps) for an RMSNorm,
    √(variance + eps) for a LayerNorm (TransformerLens's hook_scale)."""
    import torch

    centred = x - x.mean(-1, keepdim=True) if isinstance(norm, torch.nn.LayerNorm) else x
    return (centred.pow(2).mean(-1, keepdim=True) + norm_eps(norm)).sqrt()
