"""Lowerings for the StableHLO ops that `stablehlo-legalize-to-linalg` leaves alone.

One registry keyed by op name, filled by one module per op family; a custom_call may
also have a rule of its own, keyed `stablehlo.custom_call @TARGET`, which wins over
the rule for every custom_call. A rule is a plain
function `rule(op)` that rewrites `op` in place into ops the upstream legalization
(or a later stage) handles: other StableHLO ops, scf, tensor, linalg. The pass
`mlxc-lower-extra-ops` applies the rules before `stablehlo-legalize-to-linalg`.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Optional

RULES: dict[str, Callable] = {}


def lowering(*op_names: str):
    """Register the decorated function as the lowering of each op in `op_names`."""
    def register(fn: Callable) -> Callable:
        for name in op_names:
            if name in RULES:
                raise ValueError(f"two lowerings for {name}")
            RULES[name] = fn
        return fn
    return register


_loaded = False


def rules() -> dict[str, Callable]:
    """Every registered rule, importing all families on first use."""
    global _loaded
    if not _loaded:
        # Every module of this package is an op family that registers its rules on
        # import; scanning the package once per process keeps it off each compile.
        for family in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{family.name}")
        _loaded = True
    return RULES


def rule_for(op) -> Optional[Callable]:
    """The rule that lowers `op`, or None."""
    found = rules()
    if op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes:
        from .._mlir import ir

        target = ir.StringAttr(op.attributes["call_target_name"]).value
        rule = found.get(f"stablehlo.custom_call @{target}")
        if rule is not None:
            return rule
    return found.get(op.name)
