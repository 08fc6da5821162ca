"""mlxc-lower-extra-ops: apply mlxc's lowerings (mlxc.lowerings) for StableHLO ops that
`stablehlo-legalize-to-linalg` does not handle."""

from __future__ import annotations

from .. import irutil
from .. import lowerings
from . import PythonPass


def run(module) -> None:
    # Post-order, so an op nested in another's region is rewritten before its parent
    # moves or erases that region.
    for op in reversed(irutil.walk(module)):
        rule = lowerings.rule_for(op)
        if rule is not None:
            rule(op)


PASS = PythonPass(
    argument="mlxc-lower-extra-ops",
    summary="Lower the StableHLO ops upstream leaves alone, with the rules in mlxc.lowerings",
    run=run,
)
