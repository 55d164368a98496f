"""Panel "Next token": a real decoder language model (SmolLM2-135M), one lecture step per module:
predictions, temperature / top-k / top-p, generation, the KV cache, grouped-query attention."""

from app.panels.next_token.panel import NextTokenPanel

__all__ = ["NextTokenPanel"]
