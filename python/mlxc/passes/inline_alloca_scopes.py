"""mlxc-inline-alloca-scopes: remove the stack scopes that allocate nothing.

`convert-scf-to-openmp` wraps each parallel loop body in `memref.alloca_scope`, whose
region must stay one block; `convert-scf-to-cf` then fails on it, since the body's
loops become branches. mlxc-parallelize-tile-loops only makes parallel loops of bodies
with no `memref.alloca`, so those scopes free nothing and their body can take their
place. A scope that does allocate is kept.
"""

from __future__ import annotations

from .. import irutil
from . import PythonPass


def run(module) -> None:
    scopes = [op for op in irutil.walk(module) if op.name == "memref.alloca_scope"]
    for scope in reversed(scopes):  # inner scopes first
        if scope.results or any(o.name == "memref.alloca" for o in irutil.walk(scope)):
            continue
        ops = list(scope.regions[0].blocks[0].operations)
        for o in ops[:-1]:  # the last is memref.alloca_scope.return
            o.operation.move_before(scope)
        scope.erase()


PASS = PythonPass(
    argument="mlxc-inline-alloca-scopes",
    summary="Inline memref.alloca_scope ops whose body allocates nothing on the stack",
    run=run,
)
