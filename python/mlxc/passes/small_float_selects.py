"""mlxc-small-float-selects: selects of bf16/f16/fp8 values choose their bits as integers.

`arith-emulate-unsupported-floats` computes bf16, f16 and fp8 arithmetic in f32, but a
select only moves values, so it is left on the small type. LLVM's x86 backend cannot
legalize a select of bf16 vectors whose width is not a power of two ("Do not know how
to soft promote this operator's operand!", which aborts the process): the CPU schedules
vectorize a row of 9 as one vector<9xbf16> (`jnp.where(x > y, x, y)`, `jnp.sign`). A
select of the bit patterns (bitcast to the integer of the same width and back) is the
same select, and every integer vector legalizes.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _as_integers(t: ir.Type):
    """The integer type (or vector of it) of `t`'s width, when `t` is a float (or vector
    of floats) of 16 bits or fewer; else None."""
    element = irutil.element_type(t)
    if not isinstance(element, ir.FloatType) or ir.FloatType(element).width > 16:
        return None
    integer = ir.IntegerType.get_signless(ir.FloatType(element).width)
    if isinstance(t, ir.VectorType):
        return ir.VectorType.get(list(ir.VectorType(t).shape), integer,
                                 scalable=list(ir.VectorType(t).scalable_dims))
    return integer


def _bitcast(value, t):
    return ir.Operation.create("arith.bitcast", results=[t], operands=[value]).result


def run(module) -> None:
    for select in irutil.ops_named(module, "arith.select"):
        t = select.results[0].type
        bits = _as_integers(t)
        if bits is None:
            continue
        condition, a, b = select.operands
        with ir.InsertionPoint(select), select.location:
            chosen = ir.Operation.create("arith.select", results=[bits],
                                         operands=[condition, _bitcast(a, bits), _bitcast(b, bits)])
            value = _bitcast(chosen.result, t)
        select.results[0].replace_all_uses_with(value)
        select.erase()


PASS = PythonPass(
    argument="mlxc-small-float-selects",
    summary="arith.select of bf16/f16/fp8 values selects their bit patterns as integers "
            "(LLVM aborts on some bf16 vector selects)",
    run=run,
)
