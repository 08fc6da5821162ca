"""mlxc-lower-extra-ops: apply mlxc's lowerings (mlxc.lowerings) for StableHLO ops that
`stablehlo-legalize-to-linalg` does not handle."""

from __future__ import annotations

from .. import irutil
from .. import lowerings
from . import PythonPass


_names: tuple = ()


def run(module) -> None:
    global _names
    if not _names:  # the registry is complete once loaded
        _names = tuple({key.split(" @", 1)[0] for key in lowerings.rules()})
    # Only the ops a rule is registered for (by name, or custom_call by target): the
    # list holds no handle to an op a rule may erase without being one of them.
    # Post-order, so an op nested in another's region is rewritten before its parent
    # moves or erases that region.
    for op in reversed(irutil.ops_named(module, *_names)):
        rule = lowerings.rule_for(op)
        if rule is not None:
            rule(op)


PASS = PythonPass(
    argument="mlxc-lower-extra-ops",
    summary="Lower the StableHLO ops upstream leaves alone, with the rules in mlxc.lowerings",
    run=run,
)
