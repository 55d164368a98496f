"""Where the app keeps window state and preferences (QSettings, INI format on every platform)."""

from __future__ import annotations

from PySide6.QtCore import QSettings

ORGANIZATION = "AttentionLab"
APPLICATION = "attention-lab"


def settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def use_folder(folder: str) -> None:
    """Keep settings under ``folder`` instead of the user's profile (tests, smoke runs)."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
