"""mlxc-gather-loop-order: gathers fused into a reduction loop over their rows last.

An embedding lookup summed over the looked-up rows (jnp.take(table, ids).mean(1))
fuses into one linalg.generic whose loops are (batch, column, id): the reduction over
the ids comes last, as upstream orders reductions. The CPU schedule vectorizes the
column loop, and MLIR's vectorizer reads a tensor.extract whose vector ends in a
unit dimension as a gather, one index per lane, even when the lanes are a contiguous
piece of one row. With the column loop moved innermost (batch, id, column) the same
read is one contiguous vector load per row.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _has_extract(op) -> bool:
    return any(inner.name == "tensor.extract" for inner in op.regions[0].blocks[0].operations)


def _loop_to_move(op) -> int | None:
    """The parallel loop along the output's contiguous dimension, when a reduction loop
    comes after it."""
    if op.name != "linalg.generic" or len(op.results) != 1 or not _has_extract(op):
        return None
    iterators = [str(it) for it in op.attributes["iterator_types"]]
    if not iterators or "reduction" not in iterators[-1]:
        return None
    out = ir.AffineMapAttr(op.attributes["indexing_maps"][len(op.operands) - 1]).value
    if not out.results or not isinstance(out.results[-1], ir.AffineDimExpr):
        return None
    loop = ir.AffineDimExpr(out.results[-1]).position
    return loop if "parallel" in iterators[loop] else None


def _rewrite(op, loop: int) -> None:
    n = len(op.attributes["iterator_types"])
    # New position of each old loop: `loop` goes last, the ones after it move up.
    where = [k if k < loop else n - 1 if k == loop else k - 1 for k in range(n)]
    to_old = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(where[k]) for k in range(n)])
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get(
        n, m.n_symbols, [e.compose(to_old) for e in m.results])) for m in maps])
    iterators = list(op.attributes["iterator_types"])
    op.attributes["iterator_types"] = ir.ArrayAttr.get(
        [iterators[k] for k in sorted(range(n), key=lambda k: where[k])])
    index_type = ir.IntegerType.get_signless(64)
    for inner in op.regions[0].blocks[0].operations:
        if inner.name == "linalg.index":
            old = ir.IntegerAttr(inner.attributes["dim"]).value
            inner.attributes["dim"] = ir.IntegerAttr.get(index_type, where[old])


def run(module) -> None:
    for op in irutil.walk(module):
        loop = _loop_to_move(op)
        if loop is not None:
            _rewrite(op, loop)


PASS = PythonPass(
    argument="mlxc-gather-loop-order",
    summary="A gather fused into a reduction runs its reduction loop outside the loop along "
            "the output's rows, so the vectorizer reads rows contiguously",
    run=run,
)
