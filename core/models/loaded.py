"""Models loaded once and shared: every panel that asks for the same source gets the same object.

    model = loaded_models.shared.get("smollm2", progress, expect=models.DECODER)
    loaded_models.shared.peek("minilm")  # the model if it is in memory, else None (never loads)

The last ``KEEP`` models asked for stay in memory, so switching back to one is instant; an older
one that a caller still holds is handed out again rather than loaded a second time. Safe to call
from several worker threads: while one thread loads a source, the others asking for it wait and
then share it. Qt-free.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from core import models

KEEP = 2  # models kept in memory after their last use


class LoadedModels:
    """Models by source ("minilm", "smollm2" or a folder), loaded on first use."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, models.LoadedModel] = OrderedDict()  # most recent last
        self._alive: weakref.WeakValueDictionary[str, models.LoadedModel] = weakref.WeakValueDictionary()
        self._loading: dict[str, threading.Lock] = {}  # one per source: a second caller waits

    def peek(self, source: str) -> models.LoadedModel | None:
        """The model ``source`` names if it is in memory (now the most recent), else None."""
        source = str(source)
        with self._lock:
            model = self._alive.get(source)
            if model is not None:
                self._keep(source, model)
            return model

    def get(
        self, source: str, progress: models.Progress | None = None, expect: str | None = None
    ) -> models.LoadedModel:
        """The model ``source`` names, loaded with ``progress`` unless it is in memory.
        ``expect`` (models.ENCODER or DECODER) refuses the other kind with a ValueError."""
        source = str(source)
        model = self.peek(source)
        if model is None:
            with self._lock:
                loading = self._loading.setdefault(source, threading.Lock())
            with loading:
                model = self.peek(source)  # loaded by another caller while this one waited
                if model is None:
                    model = models.load_model(source, progress, expect=expect)
                    with self._lock:
                        self._alive[source] = model
                        self._keep(source, model)
        if expect is not None:
            models.check_kind(model.name, model.kind, expect)
        return model

    def forget(self, source: str) -> None:
        """Load ``source`` afresh the next time it is asked for."""
        with self._lock:
            self._kept.pop(str(source), None)
            self._alive.pop(str(source), None)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._alive.clear()

    def _keep(self, source: str, model: models.LoadedModel) -> None:
        self._kept[source] = model
        self._kept.move_to_end(source)
        while len(self._kept) > self.keep:
            self._kept.popitem(last=False)


shared = LoadedModels()  # the one the app's panels use
