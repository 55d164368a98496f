"""Speed of the residual stream and of steering on SmolLM2-135M (opt-in; run it directly, prints medians).

    python -m tests.perf.stream_perf [--model smollm2|FOLDER] [--threads N]

With the model loaded once, a 20-token prompt:
  1. one token's stream through every layer, with the final stream's parts (target ≤ 300 ms);
  2. what the panel's steps 1–3 compute at once: that, the parts' direct effects and one norm
     written out;
  3. a plain forward pass beside them, for scale;
  4. the steering vector (two runs of the prefix and a text);
  5. the first steered token (target ≤ 300 ms) and 20 steered tokens on the KV cache (≤ 2 s);
  6. a sweep of 21 strengths (the panel's plots).
"""

from __future__ import annotations

import argparse

from tests.perf.timing import wall_times_ms

PROMPT = "When Mary and John went to the store, John gave a drink to Mary, and then they went"
STEERED = "I went up to my friend and said"


def median_ms(action, repeats: int) -> tuple[float, float]:
    """(median, max) wall time of ``action()`` in ms over ``repeats`` calls, after one warm-up."""
    times = sorted(wall_times_ms(action, repeats))
    return times[len(times) // 2], times[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' (once added) or a decoder folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    import numpy as np
    import torch

    from core import models
    from core.decoder.run import hooked_run
    from core.interp.prediction import encode
    from core.interp.steering import greedy, steer, steering_vector, strength_sweep
    from core.interp.stream import direct_effects, norm_step, stream_journey

    model = models.load_model(args.model, expect=models.DECODER)
    if args.threads:
        torch.set_num_threads(args.threads)
    ids = encode(model, PROMPT)[0][:20]
    layer = min(9, model.n_layers - 1)
    print(f"{model.name}: {len(ids)} tokens, torch threads {torch.get_num_threads()}")

    def steps_one_to_three():
        journey = stream_journey(model, ids)
        return direct_effects(model, journey), norm_step(model, ids, -1, 0)

    for name, action, repeats in (
        ("a token's stream and its parts", lambda: stream_journey(model, ids), 7),
        ("the panel's steps 1-3 (with direct effects and a norm)", steps_one_to_three, 7),
        ("a plain forward pass", lambda: hooked_run(model, ids), 7),
        ("the steering vector", lambda: steering_vector(model, " weddings", " funerals", layer), 7),
    ):
        med, top = median_ms(action, repeats)
        print(f"{name}: median {med:.0f} ms, max {top:.0f} ms")
    vector = steering_vector(model, " weddings", " funerals", layer)
    prompt = encode(model, STEERED)[0]
    for new, repeats in ((1, 7), (20, 3)):
        med, top = median_ms(lambda new=new: greedy(model, prompt, new, steer(vector, 0.6)), repeats)
        print(f"{new} steered token(s): median {med:.0f} ms, max {top:.0f} ms")
    strengths = np.linspace(0.0, 2.0, 21)
    token = greedy(model, prompt, 1).ids[0]
    med, top = median_ms(lambda: strength_sweep(model, prompt, vector, strengths, token), 3)
    print(f"a sweep of 21 strengths: median {med:.0f} ms, max {top:.0f} ms")


if __name__ == "__main__":
    main()
