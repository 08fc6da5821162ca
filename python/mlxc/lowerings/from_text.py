"""Replace an op by IR written as MLIR text.

Lowerings that build loops and long chains of StableHLO ops read far better as the
MLIR they produce than as builder calls (the bindings have no StableHLO builders at
all), so a rule writes the body of a function whose arguments are the op's operands
and whose `return` gives the op's results; `replace_with_text` parses it in the op's
context and splices it in place of the op.
"""

from __future__ import annotations

from typing import Sequence

from .. import irutil
from .._mlir import ir


def replace_with_text(op, body: str, arg_names: Sequence[str]) -> None:
    """Replace `op` by `body`, MLIR text ending in `return`, in which `%NAME` for each
    name in `arg_names` is the op's operand at that position."""
    op = op.operation
    if len(arg_names) != len(op.operands):
        raise ValueError(f"{op.name}: {len(arg_names)} names for {len(op.operands)} operands")
    args = ", ".join(f"%{name}: {value.type}" for name, value in zip(arg_names, op.operands))
    results = ", ".join(str(r.type) for r in op.results)
    text = f"func.func @lowering({args}) -> ({results}) {{\n{body}\n}}\n"
    try:
        helper = ir.Module.parse(text, context=op.context)
    except ir.MLIRError as e:
        # The text is ours, not the user's: this is a bug in the rule, so say so plainly.
        raise RuntimeError(f"mlxc's lowering of {op.name} made invalid IR: {e}\n{text}") from e
    block = helper.body.operations[0].regions[0].blocks[0]
    ops = list(block.operations)
    terminator = ops[-1]
    for new in ops[:-1]:
        new.move_before(op)
        # Errors about the new ops (stage contracts, later passes) should point at the
        # user's op, not at a line of text the user never saw.
        for nested in irutil.walk(new):
            nested.location = op.location
    for arg, operand in zip(block.arguments, op.operands):
        arg.replace_all_uses_with(operand)
    for result, value in zip(op.results, terminator.operands):
        result.replace_all_uses_with(value)
    op.erase()

