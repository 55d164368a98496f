"""Speed of the Inside a head steps on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.head_explain_perf [--model smollm2|FOLDER] [--threads N] [--panel]

With the model loaded once and a 14-token prompt's run kept in memory:
  1. step 1 for another query/key cell (target ≤ 30 ms);
  2. step 2's split for a head in the last layer, about 270 parts a side (target ≤ 300 ms);
  3. step 3, what a head writes, read over the whole vocabulary;
  4. step 4, every component's direct share of a logit difference (target ≤ 300 ms);
  5. the panel's computes for another cell (step 1 alone, as a click redraws it, and steps 2–4)
     and for a new prompt (the forward pass, then every step; target ≤ 1 s); with ``--panel``
     also a new prompt typed into the panel until every step is drawn.
On a machine shared with other work, ``--threads 1`` keeps torch's threads from waiting on each other.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from dataclasses import replace

from tests.perf.timing import median_ms

PROMPT = "When Mary and John went to the store, John gave a drink to"
REPEATS = 9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--panel", action="store_true", help="also time a new prompt typed into the panel")
    args = parser.parse_args()
    import torch

    from app.panels.inside_head.state import HeadState, compute_inside
    from core.interp import head
    from core.interp.prediction import encode
    from core.models.loaded import shared

    if args.threads:
        torch.set_num_threads(args.threads)
    model = shared.get(args.model)
    ids = encode(model, PROMPT)[0]
    rec = head.record(model, ids)
    last, n = rec.layers - 1, len(ids)
    cells = itertools.cycle([(n - 1, 1), (n - 1, 3), (9, 1), (12, 4)])
    target, foil = ids[1], ids[3]  # " Mary", " John"
    print(
        f"{model.name}, {n} tokens, {rec.layers} layers × {rec.heads} heads, "
        f"torch threads {torch.get_num_threads()}"
    )
    rows = [
        ("step 1, another cell", lambda: head.head_step(rec, last, 4, *next(cells))),
        ("step 2, a last-layer head", lambda: head.why_here(rec, last, 4, n - 1, 1)),
        ("step 3, what it writes", lambda: head.what_it_writes(rec, last, 4, n - 1, 1)),
        ("step 4, direct shares", lambda: head.direct_shares(rec, target, foil)),
        ("forward pass with the taps", lambda: head.record(model, ids)),
    ]
    state = HeadState(source=args.model, prompt=PROMPT, layer=rec.layers, head=5, query=0, key=2)
    cell = itertools.cycle(range(1, n + 1))
    words = itertools.count()

    def another(compute):
        return lambda: compute(replace(state, query=next(cell)))

    def new_prompt():
        compute_inside(replace(state, prompt=f"{PROMPT} {next(words)}"))

    rows += [
        ("panel steps 1–4, another cell", another(compute_inside)),
        ("panel, a new prompt, steps 1–4", new_prompt),
    ]
    for name, action in rows:
        print(f"  {name:<32} {median_ms(action):8.2f} ms")
    if args.panel:
        click, typed = panel_ms(args.model)
        print(f"  {'panel, a click → step 1 drawn':<32} {click:8.1f} ms")
        print(f"  {'panel, a new prompt → all drawn':<32} {typed:8.1f} ms")


def panel_ms(source: str) -> tuple[float, float]:
    """Medians in the panel: a click on another cell until step 1 is drawn, and a new prompt
    typed until every step is drawn."""
    from PySide6.QtWidgets import QApplication

    from app import worker
    from app.panels.inside_head import InsideHeadPanel

    app = QApplication.instance() or QApplication([])
    panel = InsideHeadPanel()
    panel.resize(1280, 720)
    panel.show()
    panel.use_model(source)
    worker.wait_idle(300)
    words, queries = itertools.count(), itertools.cycle(range(3, 14))

    def clicked() -> float:  # from an idle panel, as a person clicks after looking
        worker.wait_idle(60)
        start = time.perf_counter()
        panel.real.weight_map.clicked.emit(next(queries), 1)
        while panel.live.state != panel.live.wanted:  # step 1 lands before steps 2–4
            app.processEvents()
        panel.real.refresh()
        return (time.perf_counter() - start) * 1000

    def typed() -> None:
        panel.prompt.setText(f"{PROMPT} {next(words)}")
        worker.wait_idle(60)
        for step in range(len(panel.steps)):
            panel.set_step(step)
            app.processEvents()

    panel.set_step(0)
    click = statistics.median(clicked() for _ in range(REPEATS))
    return click, median_ms(typed, repeats=5)


if __name__ == "__main__":
    main()
