"""mlxc-gpu-split-reductions: a reduction to few outputs becomes a tree of reductions.

After the mapping, one thread computes each output element, so `x.sum()` would run
on one thread and a column sum on as many threads as columns. A linalg.generic whose
outputs are fewer than the threads a large GPU runs at once (TARGET_THREADS) and whose
longest reduction dimension R is long is split in two generics: the first reduces
R = Q x S into S partial results per output (element `q * S + s` goes to partial `s`,
through an expand_shape view of the input) in a temporary initialised with the
combiner's neutral element; the second combines the partials into the original
output, keeping its initial value. Neighbouring threads read neighbouring elements:
when R is the input's contiguous dimension (a row or whole-array sum) s varies
fastest across threads, else (a column sum) the outputs do, the partials stored as
[S, outputs]. The pass repeats on the second generic until the reductions are short,
so a sum over 4M elements becomes kernels of 131072, 4096, 128 and 1 threads: no
atomics, no barriers, and the same result on any machine (floating-point sums are
reassociated, as in XLA). A reduction with enough outputs along its innermost,
contiguous dimension (row sums of many rows) is split by 32 instead, so that the
threads of a warp read neighbouring elements.

Only reductions whose inputs index the split dimension plainly (no convolution
windows, no strided views), and whose body ends in `yield combiner(value, out)`, with the output used
only there, are split (sum, product, max, min, and, or, xor); anything else stays.
"""

from __future__ import annotations

import math

from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass

TARGET_THREADS = 1 << 18  # aim for this many threads: 132 multiprocessors x 2048 threads
MIN_PER_THREAD = 32       # each partial reduces at least this many elements
WARP = 32

_COMBINERS = {"arith.addf", "arith.addi", "arith.mulf", "arith.muli", "arith.maximumf",
              "arith.minimumf", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
              "arith.andi", "arith.ori", "arith.xori"}


def _neutral(name: str, t: ir.Type) -> ir.Attribute:
    if isinstance(t, ir.FloatType):
        value = {"arith.addf": -0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf,
                 "arith.minimumf": math.inf}[name]
        return ir.FloatAttr.get(t, value)
    width = ir.IntegerType(t).width
    ones = (1 << width) - 1
    value = {"arith.addi": 0, "arith.muli": 1, "arith.ori": 0, "arith.xori": 0,
             "arith.andi": ones, "arith.maxui": 0, "arith.minui": ones,
             "arith.maxsi": 1 << (width - 1), "arith.minsi": ones >> 1}[name]
    if value >= 1 << (width - 1):  # IntegerAttr takes the signed value
        value -= 1 << width
    return ir.IntegerAttr.get(t, value)


def _combiner(generic):
    """The body's combiner op and which operand is the output, or None."""
    body = generic.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    if len(list(generic.opview.outputs)) != 1:
        return None
    out = body.arguments[len(body.arguments) - 1]
    yielded = ops[-1].operands[0]
    owner = yielded.owner
    owner = owner.operation if hasattr(owner, "operation") else owner
    if not isinstance(owner, ir.Operation) or owner.name not in _COMBINERS:
        return None
    if len(owner.operands) != 2 or out not in list(owner.operands):
        return None
    if len(list(out.uses)) != 1:
        return None
    return owner, list(owner.operands).index(out)


def _iterators(generic) -> list[str]:
    return ["reduction" if "reduction" in str(a) else "parallel"
            for a in ir.ArrayAttr(generic.attributes["iterator_types"])]


def _maps(generic) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]


def _extents(generic, maps) -> list:
    """Each loop dimension's extent, read from an operand indexed by that bare dimension."""
    n = maps[0].n_dims
    extents = [None] * n
    operands = list(generic.operands)
    for value, amap in zip(operands, maps):
        shape = ir.MemRefType(value.type).shape if isinstance(value.type, ir.MemRefType) else []
        for size, expr in zip(shape, amap.results):
            if isinstance(expr.maybe_downcast(), ir.AffineDimExpr):
                pos = ir.AffineDimExpr(expr).position
                extents[pos] = extents[pos] or size
    return extents


def _split_factor(extent: int, outputs: int, other: int) -> int:
    """The largest divisor of `extent` (at least 16) that keeps about TARGET_THREADS
    threads in all, each reducing at least MIN_PER_THREAD elements (`other` is the
    size of the remaining reduction dimensions)."""
    limit = min(max(TARGET_THREADS // max(outputs, 1), 1), extent * other // MIN_PER_THREAD,
                extent)
    for s in range(limit, 15, -1):
        if extent % s == 0:
            return s
    return 0


def _iterator_attr(kind: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#linalg.iterator_type<{kind}>")


def _generic(inputs, outputs, maps, iterators, location):
    return ir.Operation.create(
        "linalg.generic", operands=[*inputs, *outputs],
        attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                    "iterator_types": ir.ArrayAttr.get([_iterator_attr(k) for k in iterators]),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs)])},
        regions=1, loc=location)


def _expand(value, k: int, s_count: int):
    """`value` with dimension k of size R viewed as (R / s_count, s_count)."""
    t = ir.MemRefType(value.type)
    shape = list(t.shape)
    new_shape = shape[:k] + [shape[k] // s_count, s_count] + shape[k + 1:]
    groups, j = [], 0
    for i in range(len(shape)):
        width = 2 if i == k else 1
        groups.append(ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), j + w)
                                        for w in range(width)]))
        j += width
    return ir.Operation.create(
        "memref.expand_shape", results=[ir.MemRefType.get(new_shape, t.element_type)],
        operands=[value], attributes={"reassociation": ir.ArrayAttr.get(groups),
                                      "static_output_shape": ir.DenseI64ArrayAttr.get(new_shape)}
    ).result


def _split(generic) -> object:
    """Rewrite `generic` as two; returns the second (to split again) or None."""
    found = _combiner(generic)
    if found is None:
        return None
    combiner, out_pos = found
    iterators, maps = _iterators(generic), _maps(generic)
    extents = _extents(generic, maps)
    if None in extents:
        return None
    parallel = [i for i, k in enumerate(iterators) if k == "parallel"]
    reduction = [i for i, k in enumerate(iterators) if k == "reduction"]
    outputs = math.prod(extents[i] for i in parallel)
    if not reduction:
        return None
    inner = maps[0].results[-1] if maps[0].results else None
    inner = ir.AffineDimExpr(inner).position \
        if inner is not None and isinstance(inner.maybe_downcast(), ir.AffineDimExpr) else None
    d = max(reduction, key=lambda i: extents[i])
    other = math.prod(extents[i] for i in reduction if i != d)
    s_count = _split_factor(extents[d], outputs, other)
    if not s_count and inner in reduction:
        # Enough outputs for the GPU, but a thread per output walking a contiguous row
        # reads memory 32 rows apart across a warp: split the innermost reduction by
        # a warp instead, so that a warp reads 32 neighbouring elements.
        d = inner
        long_enough = extents[d] >= WARP * MIN_PER_THREAD and extents[d] % WARP == 0
        s_count = WARP if long_enough else 0
    if not s_count:
        return None
    # Neighbouring threads must read neighbouring elements: s varies fastest when d is
    # the input's contiguous dimension (a row sum), else the outputs do (a column sum,
    # its partials stored [s, outputs]).
    s_outer = d != inner

    # New loop order: the old parallel dims and s (parallel; s first or last), then the
    # old reduction dims with d standing for q. `old_dims[i]` is old dim i in terms of
    # the new ones.
    new_n = len(iterators) + 1
    position = {old: new + s_outer for new, old in enumerate(parallel)}
    s_dim = 0 if s_outer else len(parallel)
    first_reduction = len(parallel) + 1
    for k, old in enumerate(reduction):
        position[old] = first_reduction + k
    dim = ir.AffineDimExpr.get
    old_dims = [dim(position[i]) for i in range(len(iterators))]
    substitute = ir.AffineMap.get(new_n, 0, old_dims)
    # linalg needs every loop bound readable from a shape, so dimension d of each input
    # indexed by it is split by a view (expand_shape R -> Q x S) rather than by q * S + s.
    plans = []
    for value, amap in zip(list(generic.opview.inputs), maps[:-1]):
        uses = [k for k, e in enumerate(amap.results)
                if any(f"d{d}" == t for t in str(e).replace("(", " ").replace(")", " ").split())]
        plain = [k for k in uses if isinstance(amap.results[k].maybe_downcast(), ir.AffineDimExpr)]
        if uses and (uses != plain or len(plain) != 1 or "strided" in str(value.type)
                     or "affine_map" in str(value.type)):
            return None
        plans.append(plain[0] if plain else None)
    in_values = list(generic.opview.inputs)
    out_value = list(generic.opview.outputs)[0]
    elem = ir.MemRefType(out_value.type).element_type
    partial_shape = [extents[i] for i in parallel]
    partial_shape.insert(s_dim, s_count)
    partial_type = ir.MemRefType.get(partial_shape, elem)
    body = generic.regions[0].blocks[0]
    loc = generic.location

    with ir.InsertionPoint(generic), loc:
        partial = ir.Operation.create("memref.alloc", results=[partial_type], attributes={
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).result
        neutral = ir.Operation.create("arith.constant", results=[elem], attributes={
            "value": _neutral(combiner.name, elem)}).result
        fill = ir.Operation.create("linalg.fill", operands=[neutral, partial], attributes={
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])}, regions=1)
        fill_block = ir.Block.create_at_start(fill.regions[0], [elem, elem])
        with ir.InsertionPoint(fill_block):
            ir.Operation.create("linalg.yield", operands=[fill_block.arguments[0]])

        # Stage 1: the original body into the partials.
        partial_map = ir.AffineMap.get(new_n, 0, [dim(i) for i in range(first_reduction)])
        first_inputs, first_maps = [], []
        for value, amap, k in zip(in_values, maps[:-1], plans):
            results = [e.compose(substitute) for e in amap.results]
            if k is not None:
                value = _expand(value, k, s_count)
                results[k:k + 1] = [dim(position[d]), dim(s_dim)]
            first_inputs.append(value)
            first_maps.append(ir.AffineMap.get(new_n, 0, results))
        first = _generic(first_inputs, [partial], first_maps + [partial_map],
                         ["parallel"] * first_reduction + ["reduction"] * len(reduction), loc)
        block = ir.Block.create_at_start(first.regions[0], [a.type for a in body.arguments])
        mapping = dict(zip(body.arguments, block.arguments))
        with ir.InsertionPoint(block):
            irutil.clone_ops(body.operations, mapping)

        # Stage 2: combine the partials into the output, which keeps its initial value.
        # Its loops: the old parallel dims, then s (the reduction).
        out_map = maps[-1]
        n2 = len(parallel) + 1
        order = {old: new for new, old in enumerate(parallel)}
        keep = ir.AffineMap.get(n2, 0, [dim(order[i]) if i in order else dim(0)
                                        for i in range(len(iterators))])
        partial_dims = [dim(i) for i in range(len(parallel))]
        partial_dims.insert(s_dim, dim(len(parallel)))
        second = _generic([partial], [out_value],
                          [ir.AffineMap.get(n2, 0, partial_dims),
                           ir.AffineMap.get(n2, 0, [e.compose(keep) for e in out_map.results])],
                          ["parallel"] * len(parallel) + ["reduction"], loc)
        block2 = ir.Block.create_at_start(second.regions[0], [elem, elem])
        with ir.InsertionPoint(block2):
            args = [block2.arguments[0], block2.arguments[0]]
            args[out_pos] = block2.arguments[1]
            value = ir.Operation.create(combiner.name, results=[elem], operands=args,
                                        attributes={a.name: a.attr for a in
                                                    (combiner.attributes[i] for i in range(len(combiner.attributes)))}
                                        ).result
            ir.Operation.create("linalg.yield", operands=[value])
    with ir.InsertionPoint(generic), loc:
        ir.Operation.create("memref.dealloc", operands=[partial])
    generic.erase()
    return second


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        work = [o.operation for o in func.regions[0].blocks[0].operations
                if o.operation.name == "linalg.generic"]
        while work:
            nxt = _split(work.pop())
            if nxt is not None:
                work.append(nxt)


PASS = PythonPass(
    argument="mlxc-gpu-split-reductions",
    summary="Split reductions to few outputs into partial reductions across many threads",
    run=run,
)
