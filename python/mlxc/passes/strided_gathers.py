"""mlxc-strided-gathers: gathers that bufferized onto a strided view read it by its strides.

The vectorizer turns a tensor.extract at computed indices into a vector.gather whose
lane offsets are the indices linearized row-major over the tensor's shape: on a tensor
that is the element's position. One-shot bufferization hands the gather the tensor's
buffer unchanged, and when that buffer is a view (`logits[:, :-1]`, a subview with row
stride 32 for rows of 24 elements) the LLVM lowering adds those offsets to its first
element's address: every row after the first read from the wrong place. So, right after
bufferization, while every gather still has its tensor meaning, a gather on a
non-contiguous memref gets its offsets delinearized over the shape and relinearized
with the view's strides. Dimensions that are contiguous with the next (a run of
rows laid out one after another) stay one group, so a view that is only cut in its
outermost dimension costs one division per lane, by a constant.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _contiguous_groups(shape: list[int], strides: list[int]) -> list[list[int]]:
    """The dimensions of size other than 1, outermost first, in runs whose elements lie
    one after another (each one's stride is the next one's stride times its size). A
    dimension of size 1 is in none: its position is always 0."""
    groups: list[list[int]] = []
    for d in reversed([d for d, size in enumerate(shape) if size != 1]):
        if groups:
            inner = groups[0][0]
            if _DYNAMIC not in (strides[d], strides[inner], shape[inner]) and \
                    strides[d] == strides[inner] * shape[inner]:
                groups[0].insert(0, d)
                continue
        groups.insert(0, [d])
    return groups


def _is_row_major(shape: list[int], strides: list[int]) -> bool:
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


class _Builder:
    """Index arithmetic on vectors of the gather's lane shape."""

    def __init__(self, lanes: list[int]):
        self.index = ir.IndexType.get()
        self.vector = ir.VectorType.get(lanes, self.index)

    def splat(self, scalar):
        return ir.Operation.create("vector.broadcast", results=[self.vector],
                                   operands=[scalar]).result

    def constant(self, value: int, vector: bool = True):
        t = self.vector if vector else self.index
        attr = (ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(self.index, value))
                if vector else ir.IntegerAttr.get(self.index, value))
        return ir.Operation.create("arith.constant", results=[t],
                                   attributes={"value": attr}).result

    def binary(self, name: str, a, b):
        return ir.Operation.create(name, results=[a.type], operands=[a, b]).result


def _metadata(base, mtype: ir.MemRefType, b: _Builder):
    """The view's metadata op, and each dimension's size and stride as vectors
    (constants where the type knows them)."""
    rank = mtype.rank
    shape, strides = list(mtype.shape), mtype.get_strides_and_offset()[0]
    flat = ir.MemRefType.get([], mtype.element_type, memory_space=mtype.memory_space)
    meta = ir.Operation.create("memref.extract_strided_metadata",
                               results=[flat, b.index] + [b.index] * (2 * rank),
                               operands=[base])

    def value(static: int, position: int):
        return b.splat(meta.results[position]) if static == _DYNAMIC else b.constant(static)

    return (meta, [value(s, 2 + d) for d, s in enumerate(shape)],
            [value(s, 2 + rank + d) for d, s in enumerate(strides)])


def _flat_view(base, mtype: ir.MemRefType, meta, b: _Builder):
    """The view's elements as one unit-stride dimension from its first element (the
    LLVM lowering refuses gathers from views whose last stride is not 1)."""
    shape, strides = list(mtype.shape), mtype.get_strides_and_offset()[0]
    size = _DYNAMIC
    if _DYNAMIC not in shape + strides:
        size = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if 0 not in shape else 0
    dynamic_size = []
    if size == _DYNAMIC:
        rank = mtype.rank
        last = b.constant(1, vector=False)
        for d in range(rank):
            reach = b.binary("arith.muli", b.binary("arith.subi", meta.results[2 + d],
                                                     b.constant(1, vector=False)),
                             meta.results[2 + rank + d])
            last = b.binary("arith.addi", last, reach)
        dynamic_size = [last]
    static_offset = mtype.get_strides_and_offset()[1]
    dynamic_offset = [meta.results[1]] if static_offset == _DYNAMIC else []
    view = ir.MemRefType.get([size], mtype.element_type,
                             ir.StridedLayoutAttr.get(static_offset, [1]),
                             memory_space=mtype.memory_space)
    return ir.Operation.create(
        "memref.reinterpret_cast", results=[view],
        operands=[base] + dynamic_offset + dynamic_size,
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get(
                        [1, len(dynamic_offset), len(dynamic_size), 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get([static_offset]),
                    "static_sizes": ir.DenseI64ArrayAttr.get([size]),
                    "static_strides": ir.DenseI64ArrayAttr.get([1])}).result


def _rewrite(gather) -> None:
    base, mtype = gather.operands[0], ir.MemRefType(gather.operands[0].type)
    rank = mtype.rank
    shape, strides = list(mtype.shape), mtype.get_strides_and_offset()[0]
    starts = list(gather.operands[1:1 + rank])
    offsets, mask, pass_thru = gather.operands[1 + rank:]
    b = _Builder(list(ir.VectorType(offsets.type).shape))
    with ir.InsertionPoint(gather), gather.location:
        meta, sizes, stride_of = _metadata(base, mtype, b)
        if ir.VectorType(offsets.type).element_type != b.index:
            offsets = ir.Operation.create("arith.index_cast", results=[b.vector],
                                          operands=[offsets]).result
        # The lanes' row-major positions in the whole view (the tensor's meaning).
        linear, extent = offsets, None
        for d in range(rank - 1, -1, -1):
            start = b.splat(starts[d])
            linear = b.binary("arith.addi", linear, start if extent is None
                              else b.binary("arith.muli", start, extent))
            extent = sizes[d] if extent is None else b.binary("arith.muli", extent, sizes[d])
        # Their element offsets from the view's first element, by its strides.
        groups = _contiguous_groups(shape, strides)
        address, inner = b.constant(0), None
        for group in reversed(groups):
            size = sizes[group[0]]
            for d in group[1:]:
                size = b.binary("arith.muli", size, sizes[d])
            position = linear if inner is None else b.binary("arith.divui", linear, inner)
            if group is not groups[0]:
                position = b.binary("arith.remui", position, size)
            term = b.binary("arith.muli", position, stride_of[group[-1]])
            address = b.binary("arith.addi", address, term)
            inner = size if inner is None else b.binary("arith.muli", inner, size)
        flat = _flat_view(base, mtype, meta, b)
        new = ir.Operation.create(
            "vector.gather", results=[gather.results[0].type],
            operands=[flat, b.constant(0, vector=False), address, mask, pass_thru],
            attributes={a.name: a.attr for a in gather.attributes})
    gather.results[0].replace_all_uses_with(new.results[0])
    gather.erase()


def run(module) -> None:
    for gather in irutil.ops_named(module, "vector.gather"):
        if not isinstance(gather.operands[0].type, ir.MemRefType):
            continue
        mtype = ir.MemRefType(gather.operands[0].type)
        shape, strides = list(mtype.shape), mtype.get_strides_and_offset()[0]
        if mtype.rank > 0 and not _is_row_major(shape, strides):
            _rewrite(gather)


PASS = PythonPass(
    argument="mlxc-strided-gathers",
    summary="A vector.gather on a strided view (a bufferized slice) reads by the view's "
            "strides, not as if the view were contiguous",
    run=run,
)
