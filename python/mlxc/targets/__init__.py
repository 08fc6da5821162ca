"""Compilation targets as plugins.

A target is a module `mlxc.targets.<name>` defining `TARGET`, an object with
`name`, `pipeline(entry) -> Pipeline` (the common stages plus its own) and
`build(module, signature) -> Executable` (code generation and loading). Third-party
targets register under the `mlxc.targets` entry-point group.
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib import metadata
from typing import Protocol

from ..pipelines.model import Pipeline

BUILTIN = ("cpu", "cuda")


class Target(Protocol):
    name: str
    options: frozenset  # the keyword options build() takes; mlxc.compile refuses others

    def pipeline(self, entry: str = "main") -> Pipeline: ...

    def build(self, module, signature, **options): ...


def _plugins() -> dict:
    try:
        return {ep.name: ep for ep in metadata.entry_points(group="mlxc.targets")}
    except Exception:  # pragma: no cover - broken metadata must not break the compiler
        return {}


def available() -> list[str]:
    names = []
    for name in BUILTIN:
        if importlib.util.find_spec(f"mlxc.targets.{name}") is not None:
            names.append(name)
    return names + sorted(n for n in _plugins() if n not in names)


def get(name: str) -> Target:
    """The target named `name` (e.g. "cpu")."""
    if name in BUILTIN and importlib.util.find_spec(f"mlxc.targets.{name}") is not None:
        return importlib.import_module(f"mlxc.targets.{name}").TARGET
    plugin = _plugins().get(name)
    if plugin is not None:
        return plugin.load()
    raise ValueError(f"unknown target '{name}'; available targets: {', '.join(available())}")
