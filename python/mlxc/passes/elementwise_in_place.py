"""mlxc-elementwise-in-place: an elementwise op whose input dies there writes over it.

Lowered StableHLO gives every op a fresh `tensor.empty` destination, so `relu(x @ w + b)`
keeps two 64x512 buffers alive, the matmul's and the epilogue's, where XLA keeps one: it
runs the epilogue on the matmul's output. Bufferization can do the same only when the
op's destination is that input. This pass rewrites

    %r = linalg.generic ins(%v, %b) outs(%empty) { ^(%x, %y, %o): f(%x, %y) }
into
    %r = linalg.generic ins(%b) outs(%v) { ^(%y, %x): f(%x, %y) }

when the generic has parallel loops only, writes one result that it does not read,
reads `%v` at the very element it writes (same type, same indexing map), and is the
last op of the block to use `%v`, which a linalg op in the same block computed (so `%v`
is a temporary of ours: never a caller's input or a constant), and whose body reads no
`linalg.index` (see `_reusable_input`). Of several such inputs
the one computed first is taken. Reading `%v` through the destination's block argument
makes the tiled loops read and write the same tile, which one-shot-bufferize then keeps
in place.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _reusable_input(op):
    """The index of an input whose buffer the op may write its result into, or None."""
    n_in, n_out = irutil.dps_segments(op)
    if n_out != 1 or len(op.results) != 1:
        return None
    if any("parallel" not in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    body = op.regions[0].blocks[0]
    if list(body.arguments[n_in].uses):   # it reads its destination
        return None
    if any(inner.name == "linalg.index" for inner in body.operations):
        # Upstream's vectorizer writes `%out + f(linalg.index)` as a 1-D vector through
        # the destination's n-D map, which the verifier rejects: `m @ m.T + 4 * eye`
        # (a Cholesky's input) failed to compile. Such an op keeps its own buffer.
        return None
    maps = irutil.indexing_maps(op)
    best, best_producer = None, None
    for i in range(n_in):
        value = op.operands[i]
        if not isinstance(value.owner, (ir.Operation, ir.OpView)):
            continue   # a block argument
        producer = value.owner.operation if hasattr(value.owner, "operation") else value.owner
        same = [j for j in range(n_in) if op.operands[j] == value]
        if (producer.name.startswith("linalg.") and producer.block == op.block
                and value.type == op.results[0].type and irutil.dies_at(value, op)
                and all(maps[j] == maps[n_in] for j in same)):
            # The oldest buffer: when the result is returned, its buffer becomes the
            # output, and the one that lived longest stops counting as a temporary
            # (x + f(x) @ w keeps x in the output buffer, as XLA does).
            if best is None or producer.is_before_in_block(best_producer):
                best, best_producer = i, producer
    return best


def _rewrite(op, index: int) -> None:
    """The same generic with input `index` as its destination, read there."""
    n_in, _ = irutil.dps_segments(op)
    value = op.operands[index]
    keep = [i for i in range(n_in) if op.operands[i] != value]
    maps = irutil.indexing_maps(op)
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get(
        [ir.AffineMapAttr.get(maps[i]) for i in keep + [n_in]])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(keep), 1])
    with op.location:
        new = ir.Operation.create("linalg.generic", results=[op.results[0].type],
                                  operands=[op.operands[i] for i in keep] + [value],
                                  attributes=attrs, regions=1, ip=ir.InsertionPoint(op))
    old = op.regions[0].blocks[0]
    args = old.arguments
    body = new.regions[0].blocks.append(*[args[i].type for i in keep + [n_in]])
    for i in range(n_in):
        args[i].replace_all_uses_with(body.arguments[len(keep)] if i not in keep
                                      else body.arguments[keep.index(i)])
    args[n_in].replace_all_uses_with(body.arguments[len(keep)])
    for inner in list(old.operations):
        body.append(inner.operation)
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


def run(module) -> None:
    # The generics are gathered first and none is nested in another, so erasing one
    # leaves the handles to the rest valid (a list of blocks would hold its body's).
    for op in irutil.outermost(module, lambda op: op.name == "linalg.generic"):
        index = _reusable_input(op)
        if index is not None:
            _rewrite(op, index)


PASS = PythonPass(
    argument="mlxc-elementwise-in-place",
    summary="Elementwise ops write their result over an input that dies there",
    run=run,
)
