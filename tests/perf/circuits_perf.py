"""Speed of edge attribution patching on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.circuits_perf [--model smollm2|FOLDER] [--threads N] [--repeats N]

The IOI pair (the second John → Mary, target " Mary", foil " John"), the model loaded once: EAP
scores for every edge (target ≤ 2 s), EAP-IG with 5 steps (≤ 6 s), a faithfulness curve of 12
points (≤ 10 s), 30 edges patched alone; beside them, measured in the same run, one plain forward
pass and the machine's matrix-product rate on as many threads, the limits these stand on. Then the
panel's compute (Qt-free): a new pair to the circuit it hands back first (≤ 3 s with the drawing),
and another circuit size from the kept scores; and, offscreen, step 2 drawing that circuit (the
slider's target: within a frame).
"""

from __future__ import annotations

import argparse
import contextlib
import os

from tests.perf.patching_perf import CLEAN, CORRUPT, median_s
from tests.perf.timing import wall_times_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1, as the app)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    args = parser.parse_args()
    import torch

    from core import models
    from core.decoder.run import hooked_run
    from core.interp import circuits
    from core.interp.patching import prepare

    torch.set_num_threads(args.threads)
    model = models.load_model(args.model, expect=models.DECODER)
    pair = prepare(model, CLEAN, CORRUPT, " Mary", " John")
    a = torch.randn(1024, 1024)
    rate = 2 * 1024**3 / (min(wall_times_ms(lambda: a @ a, 5)) / 1000) / 1e9
    load = os.getloadavg()[0]
    print(f"{model.name}, {pair.length} tokens, {args.threads} torch thread(s), load {load:.1f}")
    print(f"matrix product, 1024²: {rate:.1f} GFLOP/s")
    forward, _ = median_s(lambda: hooked_run(model, pair.clean, unembed=False), args.repeats)
    print(f"one plain forward pass: {forward * 1000:.0f} ms")
    eap = circuits.edge_scores(model, pair, "eap")
    sizes = circuits.curve_counts(eap.count)
    for name, action in (
        ("EAP, every edge", lambda: circuits.edge_scores(model, pair, "eap")),
        ("EAP-IG, 5 steps", lambda: circuits.edge_scores(model, pair, "eap-ig", steps=5)),
        ("faithfulness, 12 points", lambda: circuits.faithfulness(model, eap, sizes)),
        ("30 edges patched alone", lambda: circuits.exact_effects(model, eap, eap.top(30))),
    ):
        med, low = median_s(action, args.repeats)
        print(f"{name}: median {med:.2f} s (fastest {low:.2f} s), {med / forward:.0f} forward passes")
    panel_times(model.source)


class _First(Exception):
    """Raised by the partial callback: the first result has arrived."""


def panel_times(source: str) -> None:
    """The Circuits panel's compute and drawing of step 2, as a user meets them."""
    import time
    from dataclasses import replace

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.panels.circuits.circuit import CircuitPage
    from app.panels.circuits.state import CircuitState, compute_circuit
    from app.panels.step import Live

    def first(state) -> float:
        start = time.perf_counter()

        def stop(_):
            raise _First

        with contextlib.suppress(_First):
            compute_circuit(state, partial=stop)
        return time.perf_counter() - start

    firsts = [first(CircuitState(source=source, foil=foil)) for foil in ("John", "When", "store")]
    print(f"a new pair to its first circuit (EAP): median {sorted(firsts)[1]:.2f} s of 3 pairs")
    state = CircuitState(source=source)
    compute_circuit(state)  # everything kept
    sizes = [5, 50, 500]
    took = [median_s(lambda n=n: compute_circuit(replace(state, edges=n)), 5)[0] * 1000 for n in sizes]
    print(
        "another circuit size from the kept scores: "
        + ", ".join(f"{n} edges {t:.0f} ms" for n, t in zip(sizes, took, strict=True))
    )
    app = QApplication.instance() or QApplication([])
    page = CircuitPage(Live(state, compute_circuit))
    page.resize(1200, 800)
    page.show()
    app.processEvents()
    for n in sizes:
        r = compute_circuit(replace(state, edges=n))
        ms = median_s(lambda r=r: (page.draw(r), app.processEvents()), 5)[0] * 1000
        print(f"step 2 drawing {len(r.shown)} edges: median {ms:.0f} ms")


if __name__ == "__main__":
    main()
