import inspect

from app.main import skip_feature_scan


def test_modules_imported_after_pyside_are_not_read_for_its_features(tmp_path, monkeypatch):
    """PySide6 reads every newly imported module's source to support ``__feature__``; the app
    marks modules from their globals instead (0: uses PySide6, -1: does not), as PySide6 would."""
    from PySide6.support import feature

    monkeypatch.setattr(feature, "feature_imported", feature.feature_imported)  # put back afterwards
    skip_feature_scan()
    (tmp_path / "plain_module_for_scan_test.py").write_text("VALUE = 1\n")
    (tmp_path / "qt_module_for_scan_test.py").write_text("from PySide6.QtCore import QTimer\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    read = []
    monkeypatch.setattr(inspect, "getsource", lambda module: read.append(module) or "")
    import plain_module_for_scan_test  # noqa: F401
    import qt_module_for_scan_test  # noqa: F401

    assert read == []
    assert feature.pyside_feature_dict["plain_module_for_scan_test"] == -1
    assert feature.pyside_feature_dict["qt_module_for_scan_test"] == 0
