"""Unexpected errors go to a rotating log file in the data folder, and the message names it."""

from __future__ import annotations

import logging

import pytest

from app import log_file


@pytest.fixture
def fresh_log(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.setattr(log_file, "_path", None)
    yield tmp_path
    for name in ("app", "core"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if str(tmp_path) in getattr(handler, "baseFilename", ""):
                logger.removeHandler(handler)
                handler.close()


def test_an_unexpected_error_is_logged_and_the_message_names_the_file(fresh_log, window):
    path = log_file.start()
    assert path == fresh_log / "attention-lab.log"
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        window.report_exception(type(exc), exc, exc.__traceback__)
    message = window.statusBar().currentMessage()
    assert "RuntimeError" in message and f"Details are in {path}." in message
    text = path.read_text(encoding="utf-8")
    assert "Traceback" in text and "RuntimeError: boom" in text


def test_an_unwritable_folder_says_where_the_details_went(fresh_log, monkeypatch):
    blocked = fresh_log / "a file"
    blocked.write_text("")
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(blocked / "inside"))
    assert log_file.start() is None
    assert log_file.where() == "Details were printed in the terminal."


def test_the_log_rotates(fresh_log, monkeypatch):
    monkeypatch.setattr(log_file, "MAX_BYTES", 2_000)
    path = log_file.start()
    for k in range(100):
        logging.getLogger("core.test").error("line %d %s", k, "x" * 50)
    names = sorted(p.name for p in fresh_log.glob("attention-lab.log*"))
    assert names == ["attention-lab.log", "attention-lab.log.1", "attention-lab.log.2"]
    assert path.stat().st_size <= 2_000
