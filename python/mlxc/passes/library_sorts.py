"""mlxc-library-sorts: JAX's float sorts call the runtime's radix sort (mlxc_sort_f32_rows).

A stablehlo.sort of one f32 operand whose comparator is JAX's (-0 as +0, every NaN as
the positive quiet NaN, then `compare LT, TOTALORDER`) or plain total order is a sort by
a key that is a function of the value alone. The runtime sorts such rows with a stable
radix sort (runtime/mlxc_sort.c), O(n) where the generated merge sort
(lowerings/sort.py) is O(n log n) comparator calls, with its scratch row inside the
call: the program keeps no permutation buffer (8 KiB for 512-element rows), as XLA's
sort call keeps its own. Other sorts (several operands, other comparators and types)
keep the merge sort.

Runs in the linalg stage before mlxc-lower-extra-ops, on the CPU only: the sort becomes
a call on the rows (targets/cpu/kernel_calls.py: a read-only buffer in, a fresh one
out, which bufferization then treats like any other tensor).
"""

from __future__ import annotations

import math
from typing import Optional

from .. import irutil
from .._mlir import ir, stablehlo
from ..lowerings.sort import _from_rows, _to_rows, rows_layout
from ..targets.cpu import kernel_calls
from . import PythonPass

CALLEE = "mlxc_sort_f32_rows"


def _direction(op) -> str:
    return str(stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value)


def _total_order(op) -> bool:
    return "compare_type" in op.attributes and "TOTALORDER" in str(op.attributes["compare_type"])


def _scalar_constant(value) -> Optional[float]:
    op = irutil.defining_op(value)
    if op is None or op.name != "stablehlo.constant":
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseFPElementsAttr) or not attr.is_splat:
        return None
    return ir.FloatAttr(attr.get_splat_value()).value


def _canonicalized(value, arg) -> bool:
    """Whether `value` is JAX's select(arg != arg, NaN, select(arg == 0, 0, arg))."""
    outer = irutil.defining_op(value)
    if outer is None or outer.name != "stablehlo.select":
        return False
    is_nan, nan, inner_value = outer.operands
    test = irutil.defining_op(is_nan)
    nan_value = _scalar_constant(nan)
    if test is None or test.name != "stablehlo.compare" or _direction(test) != "NE" or \
            list(test.operands) != [arg, arg] or nan_value is None or not math.isnan(nan_value):
        return False
    inner = irutil.defining_op(inner_value)
    if inner is None or inner.name != "stablehlo.select":
        return False
    is_zero, zero, same = inner.operands
    test = irutil.defining_op(is_zero)
    return (same == arg and test is not None and test.name == "stablehlo.compare"
            and _direction(test) == "EQ" and test.operands[0] == arg
            and _scalar_constant(test.operands[1]) == 0.0 and _scalar_constant(zero) == 0.0)


def comparator(op) -> Optional[int]:
    """1 for JAX's float comparator, 0 for plain total order, None for any other."""
    block = op.regions[0].blocks[0]
    a, b = block.arguments
    ret = list(block.operations)[-1]
    if ret.name != "stablehlo.return" or len(ret.operands) != 1:
        return None
    less = irutil.defining_op(ret.operands[0])
    if less is None or less.name != "stablehlo.compare" or _direction(less) != "LT" or \
            not _total_order(less):
        return None
    lhs, rhs = less.operands
    if lhs == a and rhs == b:
        return 0 if len(list(block.operations)) == 2 else None
    if _canonicalized(lhs, a) and _canonicalized(rhs, b) and len(list(block.operations)) == 10:
        return 1
    return None


def _qualifies(op) -> Optional[int]:
    if len(op.operands) != 1 or len(op.regions[0].blocks) != 1:
        return None
    t = op.operands[0].type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape \
            or ir.RankedTensorType(t).element_type != ir.F32Type.get():
        return None
    return comparator(op)


def _rewrite(op, canonical: int) -> None:
    t = ir.RankedTensorType(op.results[0].type)
    perm, rows, n = rows_layout(op)
    with ir.InsertionPoint(op), op.location:
        if n <= 1 or rows == 0:
            result = op.operands[0]
        else:
            sorted_rows = kernel_calls.call(
                CALLEE, [_to_rows(op.operands[0], perm, rows, n)],
                ir.RankedTensorType.get([rows, n], t.element_type), [rows, n], [canonical])
            result = _from_rows(sorted_rows, perm, t)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def run(module) -> None:
    found = []
    for op in irutil.ops_named(module, "stablehlo.sort"):
        canonical = _qualifies(op)
        if canonical is not None:
            found.append((op, canonical))
    if not found:
        return
    with irutil.as_operation(module).context:
        kernel_calls.declare(module, CALLEE, 2, 2, 1)
        for op, canonical in found:
            _rewrite(op, canonical)


PASS = PythonPass(
    argument="mlxc-library-sorts",
    summary="a sort of one f32 operand by JAX's comparator (or total order) calls the "
            "runtime's stable radix sort: no permutation buffer, O(n)",
    run=run,
)
