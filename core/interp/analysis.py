"""What every view of one loaded decoder shares, computed once: the intact model's run of a
prompt, each head's mean output, the logit lens of a prompt, and the induction test.

    analysis = analysis_of(model)                 # one per loaded model
    run = analysis.clean_run(ids)                 # probs (V,), attentions (L, H, T, T), streams
    analysis.means()                              # (L, H, head_dim) over the reference text
    analysis.ranking(ids, target, foil)           # every head knocked out alone
    analysis.once("steer", key, compute)          # any other result, kept by kind and key

Steps compute in parallel in the worker: one lock guards what is kept, and a result being
computed is computed once (a second caller waits for it). Layers and heads are 0-based.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.run import hooked_run
from core.interp.ablation import MEAN_REFERENCE, head_means
from core.maths.attention import softmax

KEPT_RUNS = 8  # prompts whose intact run and lens are kept
_analyses: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_made = threading.Lock()


@dataclass(frozen=True)
class CleanRun:
    """One forward pass of the intact model over a prompt."""

    probs: np.ndarray  # (vocab,) next-token probabilities
    attentions: np.ndarray  # (layers, heads, T, T) weights
    streams: Any  # (layers, T, hidden) torch: the residual stream after each layer


class Analysis:
    """The shared results of one loaded model (``model``: a core.models.LoadedModel): a decoder's
    runs, and any model's results kept by ``once``."""

    def __init__(self, model: Any):
        self.model = model
        self._lock = threading.Lock()
        self._kept: defaultdict[str, OrderedDict] = defaultdict(OrderedDict)  # kind → key → value
        self._pending: dict[tuple, threading.Lock] = {}

    def means(self) -> np.ndarray:
        """(layers, heads, head_dim): each head's mean output over the reference text."""
        ids = self.model.tokenizer(MEAN_REFERENCE)["input_ids"]
        return self.once("means", (), lambda: head_means(self.model, ids))

    def clean_run(self, ids: tuple[int, ...]) -> CleanRun:
        """The intact model's run over ``ids``."""

        def compute() -> CleanRun:
            import torch

            out = hooked_run(self.model, ids, cache=["resid_post", "pattern"])
            layers = range(self.model.n_layers)
            attentions = torch.stack([out.cache["pattern", n][0] for n in layers]).float().numpy()
            streams = torch.stack([out.cache["resid_post", n][0] for n in layers])
            return CleanRun(softmax(out.logits[0, -1].double().numpy()), attentions, streams)

        return self.once("clean", tuple(ids), compute)

    def lens(self, ids: tuple[int, ...], compute: Callable[[], Any]) -> Any:
        """The lens of ``ids`` as ``compute`` makes it, kept per prompt."""
        return self.once("lens", tuple(ids), compute)

    def induction(self, n: int, seed: int) -> Any:
        """The intact model's induction test on ``n`` seeded random tokens repeated twice."""
        from core.interp.induction import random_induction_test

        model = self.model
        return self.once(
            "induction",
            (n, seed),
            lambda: random_induction_test(model, n, seed),
            keep=1,
        )

    def ranking(
        self,
        ids: tuple[int, ...],
        target: Any,
        foil: Any,
        mode: str = "zero",
        first: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Any:
        """Every head knocked out alone on ``ids`` (``rank_by_ablation``), kept per answer, ablation
        and first-token choice; mean-ablation reads ``means()``."""
        from core.interp.ranking import rank_by_ablation

        means = self.means() if mode == "mean" else None
        return self.once(
            "ranking",
            (tuple(ids), target.id, foil.id, mode, first),
            lambda: rank_by_ablation(self.model, ids, target, foil, mode, means, progress, first),
        )

    def kept(self, kind: str, key: tuple) -> Any:
        """The kept ``kind`` result for ``key`` (``once`` would return it at once), or None."""
        with self._lock:
            return self._kept[kind].get(key)

    def once(self, kind: str, key: tuple, compute: Callable[[], Any], keep: int = KEPT_RUNS) -> Any:
        """The kept ``kind`` result for ``key``, else ``compute()`` once, however many ask; the
        last ``keep`` keys of each kind are kept."""
        with self._lock:
            kept = self._kept[kind]
            if key in kept:
                kept.move_to_end(key)
                return kept[key]
            pending = self._pending.setdefault((kind, key), threading.Lock())
        with pending:
            with self._lock:
                if key in kept:
                    return kept[key]
            value = compute()
            with self._lock:
                kept[key] = value
                while len(kept) > keep:
                    kept.popitem(last=False)
                self._pending.pop((kind, key), None)
        return value


def analysis_of(model: Any) -> Analysis:
    """The one Analysis of ``model`` (a loaded decoder), made on first use."""
    with _made:
        analysis = _analyses.get(model.module)
        if analysis is None or analysis.model is not model:
            analysis = _analyses[model.module] = Analysis(model)
    return analysis
