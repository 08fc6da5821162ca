"""mlxc-verify-stage{stage=NAME}: check the contract that ends stage NAME.

It also records `mlxc.stage = NAME` on the module, so a dump of this point can be
handed back to `mlxc.compile` or `mlxc-opt`, which resume after that stage.
"""

from __future__ import annotations

from .._mlir import ir
from ..pipelines import contracts
from . import PythonPass


def run(module, stage: str) -> None:
    contracts.check(module, stage)
    module.attributes[contracts.STAGE_ATTR] = ir.StringAttr.get(stage)


PASS = PythonPass(
    argument="mlxc-verify-stage",
    summary="Check a stage's contract (e.g. no StableHLO after 'linalg') and record mlxc.stage",
    run=run,
    options={"stage": "the stage whose contract to check: " + ", ".join(contracts.CONTRACTS)},
)
