"""mlxc-gpu-contraction-operands: what a contraction's operands compute runs once, first.

Elementwise fusion puts a contraction's producers into its body: `gelu(h @ w1) @ w2`
becomes one linalg.generic whose body computes gelu for every (m, n, k), N times over,
and whose operands are no longer plain buffers, so no tiled matmul kernel serves it.
XLA keeps producers out of its dots for this reason. Here, in a generic whose body
ends in `out + x * y`, where x depends only on inputs not indexed by some output
dimension n, and y only on inputs not indexed by some m, each side that computes
anything (or reads a view rather than a whole buffer) is written once into a
temporary by an elementwise generic over its own dimensions; the contraction then
multiplies the temporaries (mlxc-gpu-tile-matmul tiles it). The same operations run on
the same values: the results are unchanged, bit for bit. The side holding the
output's innermost dimension becomes the second operand, as the tiled kernel expects.

Only contractions over one reduction dimension whose operands' maps are bare
dimensions are rewritten.
"""

from __future__ import annotations

from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass
from .tile_matmul import _dims, _whole_buffer


def _owner(value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def _slice(value, ops) -> tuple[list, set]:
    """The body ops `value` depends on (in body order) and the block arguments it reads."""
    needed, args, work = set(), set(), [value]
    while work:
        v = work.pop()
        owner = _owner(v)
        if owner is None:
            args.add(v)
        elif owner not in needed:
            needed.add(owner)
            work.extend(owner.operands)
    return [o for o in ops if o in needed], args


def _iterators(op) -> list[str]:
    return ["reduction" if "reduction" in str(a) else "parallel"
            for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _generic(inputs, outputs, maps, iterators):
    return ir.Operation.create(
        "linalg.generic", operands=[*inputs, *outputs],
        attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                    "iterator_types": ir.ArrayAttr.get(
                        [ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in iterators]),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs)])},
        regions=1)


def _rewrite(op) -> None:
    inputs = list(op.opview.inputs)
    outputs = list(op.opview.outputs)
    if len(outputs) != 1 or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    out_arg = args[-1]
    ops = [o.operation for o in block.operations]
    yielded = ops[-1].operands
    if ops[-1].name != "linalg.yield" or len(yielded) != 1:
        return
    add = _owner(yielded[0])
    if add is None or add.name != "arith.addf" or out_arg not in list(add.operands) \
            or len(list(out_arg.uses)) != 1:
        return
    product = [v for v in add.operands if v != out_arg]
    mul = _owner(product[0]) if len(product) == 1 else None
    if mul is None or mul.name != "arith.mulf":
        return
    iterators = _iterators(op)
    reduction = [i for i, k in enumerate(iterators) if k == "reduction"]
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    out_dims = _dims(maps[-1])
    if len(reduction) != 1 or out_dims is None or len(out_dims) < 2:
        return
    sides = []
    for value in mul.operands:
        body_ops, read = _slice(value, ops)
        if out_arg in read:
            return
        positions = sorted(args.index(a) for a in read)
        if any(_dims(maps[p]) is None for p in positions):
            return
        # The temporary's layout: that of the side's largest input (so both the reads and
        # the writes of the elementwise generic coalesce), then any other dims in loop order.
        dims = list(_dims(maps[max(positions, key=lambda p: len(_dims(maps[p])))])) \
            if positions else []
        dims += sorted({d for p in positions for d in _dims(maps[p])} - set(dims))
        sides.append((value, body_ops, positions, dims))
    (_, _, _, xd), (_, _, _, yd) = sides
    k = reduction[0]
    if k not in xd or k not in yd or not set(xd) - set(yd) or not set(yd) - set(xd):
        return
    if out_dims[-1] in xd:  # the second operand must hold the output's innermost dimension
        sides.reverse()

    def computes(side) -> bool:
        _, body_ops, positions, _ = side
        plain = all(o.name == "arith.extf" for o in body_ops) and len(positions) == 1
        return not plain or not _whole_buffer(inputs[positions[0]])

    if not any(computes(s) for s in sides):
        return
    n_dims = len(iterators)
    dim = ir.AffineDimExpr.get
    new_inputs, new_maps, temps = [], [], []
    with ir.InsertionPoint(op), op.location:
        for side in sides:
            value, body_ops, positions, dims = side
            if not computes(side):
                new_inputs.append(inputs[positions[0]])
                new_maps.append(maps[positions[0]])
                continue
            # The side over its own dimensions, into a temporary.
            renumber = {d: i for i, d in enumerate(dims)}
            shape = [0] * len(dims)
            for p in positions:
                for size, d in zip(ir.MemRefType(inputs[p].type).shape, _dims(maps[p])):
                    shape[renumber[d]] = size
            temp = ir.Operation.create("memref.alloc", results=[ir.MemRefType.get(shape, value.type)],
                                       attributes={"operandSegmentSizes":
                                                   ir.DenseI32ArrayAttr.get([0, 0])}).result
            temps.append(temp)
            side_maps = [ir.AffineMap.get(len(dims), 0, [dim(renumber[d]) for d in _dims(maps[p])])
                         for p in positions]
            side_maps.append(ir.AffineMap.get_identity(len(dims)))
            compute = _generic([inputs[p] for p in positions], [temp], side_maps,
                               ["parallel"] * len(dims))
            body = ir.Block.create_at_start(compute.regions[0],
                                            [args[p].type for p in positions] + [value.type])
            mapping = {args[p]: body.arguments[i] for i, p in enumerate(positions)}
            with ir.InsertionPoint(body):
                irutil.clone_ops(body_ops, mapping)
                ir.Operation.create("linalg.yield", operands=[mapping.get(value, value)])
            new_inputs.append(temp)
            new_maps.append(ir.AffineMap.get(n_dims, 0, [dim(d) for d in dims]))
        contraction = _generic(new_inputs, outputs, new_maps + [maps[-1]], iterators)
        elem_types = [ir.MemRefType(v.type).element_type for v in new_inputs]
        body = ir.Block.create_at_start(contraction.regions[0], elem_types + [out_arg.type])
        with ir.InsertionPoint(body):
            factors = []
            for side, arg in zip(sides, body.arguments):
                value, body_ops, positions, _ = side
                if computes(side):
                    factors.append(arg)
                else:  # a plain operand, perhaps extended: the same ops on the new argument
                    mapping = {args[positions[0]]: arg}
                    irutil.clone_ops(body_ops, mapping)
                    factors.append(mapping.get(value, value) if body_ops else arg)
            attrs = {a.name: a.attr for a in (mul.attributes[i] for i in range(len(mul.attributes)))}
            p = ir.Operation.create("arith.mulf", results=[out_arg.type], operands=factors,
                                    attributes=attrs).result
            acc = body.arguments[-1]
            add_operands = [acc if v == out_arg else p for v in add.operands]
            attrs = {a.name: a.attr for a in (add.attributes[i] for i in range(len(add.attributes)))}
            s = ir.Operation.create("arith.addf", results=[out_arg.type], operands=add_operands,
                                    attributes=attrs).result
            ir.Operation.create("linalg.yield", operands=[s])
        for temp in temps:  # inserted in order: after the contraction
            ir.Operation.create("memref.dealloc", operands=[temp])
    op.erase()


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in list(func.regions[0].blocks[0].operations):
            if op.operation.name == "linalg.generic":
                _rewrite(op.operation)


PASS = PythonPass(
    argument="mlxc-gpu-contraction-operands",
    summary="Compute what a contraction's operands compute once, into temporaries, so that "
            "the contraction is a plain product of buffers",
    run=run,
)
