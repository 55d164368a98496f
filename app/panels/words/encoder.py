"""Step 5: the encoder: which words of the first sentence make two sentences close in the bundled
MiniLM, by the same five methods, for the cosine of their mean-pooled vectors. A state of its
own, computed in the worker the first time the step is shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.scripts import Script, model_code
from app.panels.step import Live, Notice, Step
from app.panels.words.state import NAMES
from app.panels.words.views import show, strip
from app.widgets.spin_boxes import spin
from app.widgets.text import TextBox, note
from core import models
from core.interp import token_scores as ts
from core.interp.similarity import Similarity, similarity_scores
from core.interp.token_text import visible
from core.models import BUNDLED
from core.models.loaded import shared as loaded_models


@dataclass(frozen=True)
class EncoderState:
    first: str = "A man is playing a guitar on the stage."
    second: str = "Someone performs music for an audience."
    steps: int = 32  # integrated gradients


@dataclass(frozen=True)
class EncoderResult:
    labels: tuple[str, ...]  # the first sentence's tokens as shown
    found: Similarity
    agreement: np.ndarray  # (5,) each method's Spearman correlation with occlusion


def compute_encoder(s: EncoderState, progress: Callable[[int, int], None] | None = None) -> EncoderResult:
    """Every method for the cosine of the two sentences in the bundled MiniLM."""
    model = loaded_models.get(BUNDLED, None, expect=models.ENCODER)
    found = similarity_scores(model, s.first, s.second, s.steps, progress)
    labels = tuple(visible(t) for t in model.tokenizer.convert_ids_to_tokens(list(found.ids)))
    occlusion = found.methods["occlusion"]
    agreement = np.array([ts.spearman(found.methods[m], occlusion) for m in ts.METHODS])
    return EncoderResult(labels, found, agreement)


class EncoderPage(Step):
    def __init__(self):
        super().__init__(Live(EncoderState(), compute_encoder, background=True, start=False))
        self.first = self.bind(TextBox(self.state.first), "first")
        self.second = self.bind(TextBox(self.state.second), "second")
        self.steps = self.bind(spin(self.state.steps, 1, 512), "steps")
        self.strips = strip("The first sentence's tokens, by each method", signed=True)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Integrated gradients' steps", self.steps)
        self.layout_with(
            "An encoder turns a sentence into one vector, the mean of its last layer. Which words of the "
            "first sentence bring it close to the second? The same five methods, now for the cosine of "
            "the two vectors, in the bundled MiniLM (the decoder above plays no part).",
            controls,
            self.strips,
            (self.summary,),
            wide=(("First sentence", self.first), ("Second sentence", self.second)),
        )

    def views(self) -> dict[str, QWidget]:
        return {"encoder": self.strips}

    def start(self) -> None:
        """The first compute, when the step is first shown (MiniLM loads then)."""
        if self.result is None and self.live.task is None:
            self.apply()

    def script(self) -> Script:
        return encoder_script(self.state)

    def draw(self, r: EncoderResult) -> Notice:
        f = r.found
        show(self.strips, {NAMES[m]: f.methods[m] for m in ts.METHODS}, r.labels, signed=True)
        with_occlusion = dict(zip(ts.METHODS[:-1], r.agreement[:-1], strict=True))
        best = max(with_occlusion, key=with_occlusion.get)
        top = int(f.methods["occlusion"].argmax())
        self.summary.setText(
            f"Cosine <b>{f.cosine:.4f}</b>. Taking away {r.labels[top]} lowers it the most "
            f"({f.methods['occlusion'][top]:.4f}). Against occlusion, {NAMES[best]} agrees best "
            f"({with_occlusion[best]:.2f}); "
            + ", ".join(f"{NAMES[m]} {v:.2f}" for m, v in with_occlusion.items() if m != best)
            + f". Integrated gradients' completeness gap: {f.ig.gap:.4f} on a change of "
            f"{f.cosine - f.ig.baseline_metric:.4f} from a zero input."
        )
        return None


def encoder_script(s: EncoderState) -> Script:
    body = model_code(BUNDLED, None, "from core.interp import token_scores as ts",
                      "from core.interp.similarity import similarity_scores")  # fmt: skip
    body += f"""
    found = similarity_scores(model, {s.first!r}, {s.second!r}, steps={s.steps})
    tokens = model.tokenizer.convert_ids_to_tokens(list(found.ids))
    print(f"Cosine of the two mean vectors: {{found.cosine:.6g}}")
    names = list(ts.METHODS)
    print(table(np.column_stack([found.methods[m] for m in names]), tokens, names))
    occlusion = found.methods["occlusion"]
    print("Spearman's correlation with occlusion:",
          ", ".join(f"{{m}} {{ts.spearman(found.methods[m], occlusion):.6g}}" for m in names))
    print(f"Completeness gap {{found.ig.gap:.6g}}; from a zero input {{found.ig.baseline_metric:.6g}}")
    """
    return Script(body)
