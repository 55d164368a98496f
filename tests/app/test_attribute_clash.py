"""No class of the app rebinds a name one of its base classes uses.

Real model's page once kept its undrawn tabs in ``self.stale``, the flag ``Step.mark_stale`` sets
to a bool: paging while the model loaded raised "argument of type 'bool' is not iterable". This
test reads every Qt class of the app and fails when an instance attribute it assigns
(``self.name = …``) is a name a base class defines: a method, a property, a class attribute, an
attribute its own methods assign, or a Qt method.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

from PySide6.QtCore import QObject

import app


def app_classes() -> list[type]:
    """Every QObject subclass defined in the app's modules (all of them imported)."""
    for info in pkgutil.walk_packages(app.__path__, "app."):
        if not info.name.endswith("__main__"):  # that one runs the command line
            importlib.import_module(info.name)
    found, todo = set(), [QObject]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted((c for c in found if c.__module__.startswith("app.")), key=lambda c: c.__qualname__)


def assigned(cls: type) -> set[str]:
    """The names ``cls``'s own methods assign on ``self``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    names = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Attribute) and getattr(leaf.value, "id", None) == "self":
                    names.add(leaf.attr)
    return names


def used_by_bases(cls: type) -> dict[str, str]:
    """{name: the base class that uses it} for every base of ``cls``."""
    used = {}
    for base in reversed(cls.__mro__[1:]):
        own = assigned(base) if base.__module__.startswith("app.") else set()
        for name in set(vars(base)) | own:
            if not name.startswith("__"):
                used[name] = base.__qualname__
    return used


def test_no_class_rebinds_a_name_its_base_uses():
    clashes = []
    for cls in app_classes():
        used = used_by_bases(cls)
        for name in sorted(assigned(cls)):
            base = used.get(name)
            if base is not None:
                clashes.append(f"{cls.__module__}.{cls.__qualname__}.{name} (used by {base})")
    assert not clashes, "rebinds a name its base class uses:\n" + "\n".join(clashes)
