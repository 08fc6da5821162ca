"""mlxc-accumulate-into-contraction: `c + a @ b` accumulates the product onto `c`.

A matmul (batched, transposed: any contraction, or a convolution) starts from a zero fill, and an
elementwise op then adds another temporary to its result: `h @ wh + x @ wx` in an RNN
step holds three buffers. A contraction computes `init + a @ b`, so starting it from
`c` instead of zeros gives the sum directly, in `c`'s buffer; the add disappears from
the elementwise op, which then reads only the product (and mlxc-elementwise-in-place
lets it write there). XLA's CPU dot emitter does the same with an addend (beta = 1);
as there, the sum is associated differently, a rounding-level change.

The rewrite applies when the contraction's init is a `linalg.fill` of zero, its result
is used once, by a linalg.generic (elementwise or a reduction) that adds it (addf/addi,
its only use in the body) to another input `c` of the same type read at the same
element and nowhere else in the body, and `c` is a
temporary: computed by a linalg op of the same block before the contraction and used
for the last time by that generic (never a caller's input, which is read-only).
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, linalg
from . import PythonPass

_ACCUMULATING = {"linalg.matmul", "linalg.batch_matmul", "linalg.matvec",
                 "linalg.conv_2d_nhwc_hwcf"}


def _is_zero_fill(value) -> bool:
    fill = irutil.defining_op(value)
    return fill is not None and fill.name == "linalg.fill" and \
        irutil.is_zero_constant(fill.operands[0])


def _match(op):
    """(contraction, index of its result in op's inputs, index of the addend, the add)
    for a generic that adds a fresh contraction result to a dying temporary, or None."""
    n_in, n_out = irutil.dps_segments(op)
    maps = irutil.indexing_maps(op)
    body = op.regions[0].blocks[0]
    for i in range(n_in):
        contraction = irutil.defining_op(op.operands[i])
        if contraction is None or len(contraction.results) != 1 or \
                len(list(op.operands[i].uses)) != 1:
            continue
        if contraction.name not in _ACCUMULATING and not (
                contraction.name == "linalg.generic" and linalg.isa_contraction_op(contraction)):
            continue   # (a contraction generic's body is out + a * b)
        c_in, _ = irutil.dps_segments(contraction)
        if not _is_zero_fill(contraction.operands[c_in]):
            continue
        uses = list(body.arguments[i].uses)
        if len(uses) != 1 or irutil.as_operation(uses[0].owner).name not in ("arith.addf", "arith.addi"):
            continue
        add = irutil.as_operation(uses[0].owner)
        other = add.operands[1 - uses[0].operand_number]
        for j in range(n_in):
            if j == i or other != body.arguments[j] or len(list(body.arguments[j].uses)) != 1:
                continue
            addend = op.operands[j]
            producer = irutil.defining_op(addend)
            if (producer is not None and producer.name.startswith("linalg.")
                    and producer.block == op.block and contraction.block == op.block
                    and producer.is_before_in_block(contraction)
                    and addend.type == op.operands[i].type and maps[j] == maps[i]
                    and irutil.dies_at(addend, op)
                    and [op.operands[k] for k in range(n_in)].count(addend) == 1):
                return contraction, i, j, add
    return None


def _without_input(op, drop: int):
    """The same generic without input `drop`, whose block argument has no uses."""
    n_in, n_out = irutil.dps_segments(op)
    keep = [k for k in range(len(op.operands)) if k != drop]
    maps = irutil.indexing_maps(op)
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(maps[k]) for k in keep])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_in - 1, n_out])
    with op.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in op.results],
                                  operands=[op.operands[k] for k in keep], attributes=attrs,
                                  regions=1, ip=ir.InsertionPoint(op))
    old = op.regions[0].blocks[0]
    body = new.regions[0].blocks.append(*[old.arguments[k].type for k in keep])
    for position, k in enumerate(keep):
        old.arguments[k].replace_all_uses_with(body.arguments[position])
    for inner in list(old.operations):
        body.append(irutil.as_operation(inner))
    for old_result, new_result in zip(op.results, new.results):
        old_result.replace_all_uses_with(new_result)
    op.erase()


def run(module) -> None:
    generics = []
    irutil.as_operation(module).walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None)
                     or ir.WalkResult.ADVANCE, ir.WalkOrder.PRE_ORDER)
    for op in generics:
        found = _match(op)
        if found is None:
            continue
        contraction, i, j, add = found
        c_in, _ = irutil.dps_segments(contraction)
        contraction.operands[c_in] = op.operands[j]
        add.results[0].replace_all_uses_with(op.regions[0].blocks[0].arguments[i])
        add.erase()
        _without_input(op, j)


PASS = PythonPass(
    argument="mlxc-accumulate-into-contraction",
    summary="Start a zero-initialised contraction from the temporary its result is added to",
    run=run,
)
