"""Inside one attention head of a real model, on its own numbers (Qt-free).

    rec = record(model, ids)                         # one run, kept: q, k, v, weights, streams
    head_step(rec, layer, head, i, j)                # step 1: q_i·k_j, scale, row, weighted values
    why_here(rec, layer, head, i, j)                 # step 2: the score as query part × key part terms
    what_it_writes(rec, layer, head, i, j)           # step 3: its output through the frozen final norm
    direct_shares(rec, target_id, foil_id)           # step 4: each component's direct logit share

Layers, heads and positions are 0-based in code. Steps 2–4 need a decoder of a supported family
(Gemma 2's capped scores and logits are split before the cap; ``note`` says so); step 1 works on
any model the taps read, the MiniLM encoder included.
"""

from core.interp.head.parts import check_split
from core.interp.head.record import Recorded, record
from core.interp.head.step import HeadStep, head_step, token_position
from core.interp.head.why import ScoreSplit, why_here
from core.interp.head.writes import DirectShares, Writes, direct_shares, what_it_writes

__all__ = [
    "DirectShares", "HeadStep", "Recorded", "ScoreSplit", "Writes", "check_split", "direct_shares",
    "head_step", "record", "token_position", "what_it_writes", "why_here",
]  # fmt: skip
