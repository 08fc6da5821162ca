"""mlxc-extracts-as-inputs: a tensor.extract at the loop's own indices becomes an input.

`stablehlo-legalize-to-linalg` lowers a gather to a linalg.generic whose body reads its
operands with tensor.extract. Some of those reads are not gathers at all: in
`take_along_axis(logits, labels[:, None])` the label of row i is read at
`[linalg.index 0, 0]`, the loop's own position. Read that way, the label tensor is opaque
to `linalg-fuse-elementwise-ops`, so its producer (JAX's wrap of negative labels) stays
a buffer of its own; XLA fuses it. As an input with the indexing map the indices spell,
`(d0, d1) -> (d0, 0)`, it is an ordinary operand that the fusion can merge.

An extract qualifies when it sits directly in the generic's body (not in a nested
region) and each index is a `linalg.index` of a loop that spans the dimension exactly,
or an index constant within it. Data-dependent indices stay extracts, and so does a
read that indexes another read while being the same in every vector lane (an
embedding's id, read once per row of the table): the vectorizer loads the whole row
contiguously only while it can see that.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _loop_extents(generic) -> dict:
    """Loop -> trip count, from the operands that a loop indexes directly."""
    extents = {}
    for value, m in zip(generic.operands, irutil.indexing_maps(generic)):
        shape = ir.ShapedType(value.type)
        if not shape.has_static_shape:
            continue
        for size, e in zip(shape.shape, m.results):
            if isinstance(e, ir.AffineDimExpr):
                extents.setdefault(e.position, size)
    return extents


def _index_expr(value, extents: dict, extent: int):
    """The affine expression `value` is as an index into a dimension of `extent`, or None.
    A loop index qualifies only when the loop spans the dimension exactly: linalg infers
    each loop's trip count from the first operand indexed by it, and verifies that every
    other operand agrees."""
    op = irutil.defining_op(value)
    if op is None:
        return None
    if op.name == "linalg.index":
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        trips = extents.get(dim)
        return ir.AffineDimExpr.get(dim) if trips == extent else None
    c = irutil.constant_int(value)
    if c is not None and 0 <= c < extent:
        return ir.AffineConstantExpr.get(c)
    return None


def _as_input(generic, extract, extents: dict):
    """The indexing map under which `extract` reads its tensor, or None (`extents`:
    _loop_extents of `generic`)."""
    source = ir.RankedTensorType(extract.operands[0].type) \
        if isinstance(extract.operands[0].type, ir.RankedTensorType) else None
    if source is None or not source.has_static_shape:
        return None
    loops = len(ir.ArrayAttr(generic.attributes["iterator_types"]))
    exprs = []
    for value, extent in zip(list(extract.operands)[1:], source.shape):
        e = _index_expr(value, extents, extent)
        if e is None:
            return None
        exprs.append(e)
    return ir.AffineMap.get(loops, 0, exprs)


def _rewrite(generic, reads: list) -> None:
    n_in, n_out = irutil.dps_segments(generic)
    inputs = list(generic.operands[:n_in])
    outputs = list(generic.operands[n_in:n_in + n_out])
    maps = irutil.indexing_maps(generic)
    new_inputs = inputs + [extract.operands[0] for extract, _ in reads]
    new_maps = maps[:n_in] + [m for _, m in reads] + maps[n_in:]
    old_block = generic.regions[0].blocks[0]
    attrs = {name: generic.attributes[name] for name in generic.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(new_inputs), len(outputs)])
    with ir.InsertionPoint(generic), generic.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in generic.results],
                                  operands=new_inputs + outputs, attributes=attrs, regions=1)
    args = [a.type for a in old_block.arguments]
    types = args[:n_in] + [ir.RankedTensorType(e.operands[0].type).element_type
                           for e, _ in reads] + args[n_in:]
    block = new.regions[0].blocks.append(*types)
    mapping = {}
    for i, a in enumerate(old_block.arguments):
        mapping[a] = block.arguments[i if i < n_in else i + len(reads)]
    for j, (extract, _) in enumerate(reads):
        mapping[extract.results[0]] = block.arguments[n_in + j]
    skip = {extract for extract, _ in reads}
    with ir.InsertionPoint(block):
        irutil.clone_ops([o for o in old_block.operations if o not in skip], mapping)
    for old, value in zip(generic.results, new.results):
        old.replace_all_uses_with(value)
    generic.erase()


def _feeds_an_index(extract) -> bool:
    """Whether the value `extract` reads flows (through the body's scalar ops) into the
    indices of another tensor.extract: the read is then a gather's index."""
    seen, work = set(), [extract.results[0]]
    while work:
        value = work.pop()
        for use in value.uses:
            user = irutil.as_operation(use.owner)
            if user.name == "tensor.extract" and use.operand_number > 0:
                return True
            if user.name == "linalg.yield" or len(user.regions):
                continue
            for r in user.results:
                if r not in seen:
                    seen.add(r)
                    work.append(r)
    return False


def _uniform_across_lanes(generic, read, extents: dict) -> bool:
    """Whether `read` (an indexing map) leaves out a parallel loop of more than one trip:
    the vectorizer runs its lanes along such a loop, and an index read as an extract at
    indices it does not vary is known to be the same in every lane (a row gather then
    loads contiguous rows); as an input it is a vector like any other, and the row read
    a gather of one element per lane."""
    used = {e.position for e in read.results if isinstance(e, ir.AffineDimExpr)}
    iterators = ir.ArrayAttr(generic.attributes["iterator_types"])
    return any("parallel" in str(it) and extents.get(d, 1) > 1 and d not in used
               for d, it in enumerate(iterators))


def run(module) -> None:
    for generic in irutil.ops_named(module, "linalg.generic"):
        if not all(isinstance(r.type, ir.RankedTensorType) for r in generic.results):
            continue
        extracts = [op for op in generic.regions[0].blocks[0].operations
                    if op.name == "tensor.extract"]
        if not extracts:
            continue
        extents = _loop_extents(generic)
        reads = []
        for op in extracts:
            m = _as_input(generic, op, extents)
            if m is not None and not (_feeds_an_index(op) and
                                      _uniform_across_lanes(generic, m, extents)):
                reads.append((op, m))
        if reads:
            _rewrite(generic, reads)


PASS = PythonPass(
    argument="mlxc-extracts-as-inputs",
    summary="a tensor.extract in a linalg.generic body at the loop's own indices (and "
            "constants) becomes an input with that indexing map, so its producer fuses",
    run=run,
)
