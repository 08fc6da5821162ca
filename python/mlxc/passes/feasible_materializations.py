"""mlxc-feasible-materializations: `bufferization.materialize_in_destination` ops that
cannot bufferize in place are dropped.

The control-flow lowering yields a fresh rank-0 loop value through
`materialize_in_destination` into its iteration argument, so that the loop updates it
in place; it checks that the value is yielded once. Later rewrites can undo what it
checked, and one-shot-bufferize then fails instead of copying:
- canonicalization and `cse` make two such values one (`a + b` and `b + a`), which one
  value cannot be materialized into two buffers ("cannot avoid RaW conflict");
- a loop of one iteration folds away, leaving the destination a function argument,
  which is read-only ("would write to read-only buffer").
Only a materialization into the iteration argument of a loop, of a value materialized
nowhere else, is kept; the others become the plain value, which bufferization copies
where it must (the values are rank 0).
"""

from __future__ import annotations

from .. import irutil
from . import PythonPass

_LOOPS = ("scf.for", "scf.while", "scf.forall")


def _loop_argument(value) -> bool:
    owner = value.owner
    if hasattr(owner, "name"):
        return False  # an op's result, not a block argument
    parent = owner.owner  # the block's parent op
    return parent is not None and parent.name in _LOOPS


def run(module) -> None:
    ops = irutil.ops_named(module, "bufferization.materialize_in_destination")
    sources = [op.operands[0] for op in ops]
    for op, source in zip(ops, sources):
        if sum(source == s for s in sources) > 1 or not _loop_argument(op.operands[1]):
            op.results[0].replace_all_uses_with(source)
            op.erase()


PASS = PythonPass(
    argument="mlxc-feasible-materializations",
    summary="loop-value materializations that cannot bufferize in place (one value into two "
            "arguments after cse, a destination no longer a loop's) become plain yields",
    run=run,
)
