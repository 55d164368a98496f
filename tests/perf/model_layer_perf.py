"""Speed of the model layer (opt-in; run it directly, prints medians).

    python -m tests.perf.model_layer_perf [--model smollm2|FOLDER|CACHE_ID] [--threads N]

1. Opening a model, warm (torch and transformers already imported, the files in the page
   cache): the whole load_model, its check against transformers' logits included, and the
   check alone (target: a 135 M model ≤ 3 s).
2. Listing a Hugging Face cache of 20 models (config, tokenizer and a weights link each; the
   weights are tiny, the layout is the real one) through the registry (target ≤ 200 ms).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from tests.perf.timing import median_ms


def fake_cache(root: Path, n: int) -> None:
    """``n`` cached models laid out as the hub writes them."""
    for i in range(n):
        repo = root / f"models--org--model{i}"
        snapshot = repo / "snapshots" / "abc"
        snapshot.mkdir(parents=True)
        (repo / "blobs").mkdir()
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text("abc")
        files = {
            "config.json": json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                                       "num_hidden_layers": 30, "num_attention_heads": 9}),
            "tokenizer.json": "{}",
            "model.safetensors": "x" * 1000,
        }  # fmt: skip
        for name, text in files.items():
            (repo / "blobs" / name).write_text(text)
            (snapshot / name).symlink_to(repo / "blobs" / name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    from core import models
    from core.decoder.adapter import readout_error
    from core.models.registry import known_models

    model = models.load_model(args.model)  # cold: imports and page cache
    print(f"{model.describe()}, torch threads {torch.get_num_threads()}")
    ms = median_ms(lambda: models.load_model(args.model), 5)
    print(f"open {args.model}, warm, logits check included: {ms:.0f} ms")
    ids = model.tokenizer("The quick brown fox jumps over the lazy dog.")["input_ids"]
    print(f"  of which the logits check: {median_ms(lambda: readout_error(model.module, ids), 5):.0f} ms")
    with tempfile.TemporaryDirectory() as folder:
        fake_cache(Path(folder), 20)
        listed = known_models(cache=Path(folder))
        ms = median_ms(lambda: known_models(cache=Path(folder)), 15)
        print(f"list a cache of 20 models ({len(listed)} entries with the bundled ones): {ms:.1f} ms")


if __name__ == "__main__":
    main()
