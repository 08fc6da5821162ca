"""mlxc-small-top-k: a top_k that keeps k of n elements as `custom_call @mlxc.top_k`.

`chlo-legalize-to-stablehlo` (and the decomposition of jax.export's
`stablehlo.composite "chlo.top_k"`) sorts every row whole to keep its first k: for
lax.top_k(x, 5) on 1000 columns that is ~10,000 comparisons a row where one pass
over the row with a short list of the k best needs ~1,000. For small k, the op
becomes a custom call that mlxc.lowerings.top_k lowers to that one pass; large k
(or element types the lowering does not order) keep the sort. Runs before
stablehlo-legalize-composite-to-call and chlo-legalize-to-stablehlo.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

# The selection inserts into a sorted list of k: k <= 16 keeps that list short, and
# n >= 4k keeps most elements below the k-th best, where they cost one comparison.
MAX_K = 16
MIN_COLUMNS_PER_K = 4
TARGET = "mlxc.top_k"


def _orderable(element: ir.Type) -> bool:
    """Element types the lowering orders: floats by total order, signed integers."""
    # StableHLO's signed integers are signless in the IR (i32); unsigned ones (ui32),
    # booleans (i1) and odd widths keep the sort.
    return str(element) in ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64")


def _is_top_k(op) -> bool:
    if op.name == "chlo.top_k":
        return True
    return (op.name == "stablehlo.composite" and "name" in op.attributes
            and ir.StringAttr(op.attributes["name"]).value == "chlo.top_k")


def _fits(op) -> bool:
    if len(op.operands) != 1 or len(op.results) != 2:
        return False
    operand, values = op.operands[0].type, op.results[0].type
    if not (isinstance(operand, ir.RankedTensorType) and operand.has_static_shape
            and isinstance(values, ir.RankedTensorType) and values.has_static_shape):
        return False
    if operand.rank == 0 or not _orderable(operand.element_type):
        return False
    n, k = operand.shape[-1], values.shape[-1]
    return 1 <= k <= MAX_K and n >= MIN_COLUMNS_PER_K * k


def run(module) -> None:
    for op in irutil.ops_named(module, "chlo.top_k", "stablehlo.composite"):
        if not _is_top_k(op) or not _fits(op):
            continue
        with ir.InsertionPoint(op), op.location:
            # k is the results' last dimension: the call needs no attribute for it.
            call = ir.Operation.create(
                "stablehlo.custom_call", results=[r.type for r in op.results],
                operands=[op.operands[0]],
                attributes={"call_target_name": ir.StringAttr.get(TARGET)})
        for old, new in zip(op.results, call.results):
            old.replace_all_uses_with(new)
        op.erase()


PASS = PythonPass(
    argument="mlxc-small-top-k",
    summary="chlo.top_k with k <= 16 (and n >= 4k) as custom_call @mlxc.top_k, a one-pass selection",
    run=run,
)
