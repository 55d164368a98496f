"""Paging through every step, as PgDn does, while the first model loads are still running (a slow
first start): no step raises, and nothing is left in the status bar or as an error in a panel."""

from __future__ import annotations

import threading

import pytest

from tests.app.conftest import idle
from tests.waits import patience

pytest.importorskip("transformers")
pytestmark = pytest.mark.models


def test_paging_while_models_load_leaves_no_error(monkeypatch, window, qapp):
    from app.commands.smoke import page_through
    from core import models
    from core.models import loaded as loaded_models

    load, paged, asked = models.load_model, threading.Event(), []

    def slow_load(*args, **kwargs):  # every load lasts until the paging is done
        asked.append(args[0])
        paged.wait(timeout=patience(60))
        return load(*args, **kwargs)

    monkeypatch.setattr(models, "load_model", slow_load)
    loaded_models.shared.clear()  # loaded afresh, slowly
    page_through(window, window.keys(), qapp)
    paged.set()
    assert asked  # a model was loading while the steps were paged
    idle()
    qapp.processEvents()
    assert window.statusBar().currentMessage() == ""
    errors = {key: p.message.text() for key, p in window.panels.items() if p.message.level == "error"}
    assert errors == {}
