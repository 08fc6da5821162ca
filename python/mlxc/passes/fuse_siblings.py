"""mlxc-fuse-siblings: elementwise ops over the same loops that read the same input, as one
op with several results (XLA's multi-output fusion).

An optimizer step computes, per parameter, m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2
and p' from g, m, v and p. m' and v' are results of the step and also feed p', so
`linalg-fuse-elementwise-ops` (single consumers only) keeps three loops: g is read three
times, m and v twice, and m' and v' are written and read back. One loop with three
results reads each input once.

Two `linalg.generic` ops of the same block are merged when both have parallel loops only
over the same static ranges, write their results at the loop indices, and either read a
value in common or the later one reads the earlier one's result at the element it writes
(a producer that has other users too, so the fusion above left it: that read becomes the
earlier one's yielded value); any other path between them keeps them apart. The merged op stands where
the later one stood, so nothing may use the earlier one's results in between. At most
MAX_RESULTS results per op, so the tile's vectors still fit in registers.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

MAX_RESULTS = 4


def _candidate(op) -> bool:
    if op.name != "linalg.generic" or not op.results:
        return False
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    if any("parallel" not in str(it) for it in iterators):
        return False
    if any(len(o.regions) for o in op.regions[0].blocks[0].operations):
        return False
    return all(isinstance(v.type, ir.RankedTensorType) and
               ir.RankedTensorType(v.type).has_static_shape for v in op.operands)


def _identity(m) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims) and m.n_symbols == 0


def _key(op):
    """What two ops must share to run in one loop nest: results written at the loop
    indices (identity maps), all of one shape, which is then the loop ranges."""
    n_in, _ = irutil.dps_segments(op)
    maps = irutil.indexing_maps(op)
    if any(not _identity(m) for m in maps[n_in:]):
        return None
    shapes = {tuple(ir.RankedTensorType(r.type).shape) for r in op.results}
    return shapes.pop() if len(shapes) == 1 else None


def _fusable(a, b) -> bool:
    """b (later in the block, of the same key) may join a."""
    if len(a.results) + len(b.results) > MAX_RESULTS:
        return False
    a_in, _ = irutil.dps_segments(a)
    b_in, _ = irutil.dps_segments(b)
    # What merging saves: a full-size read (at the loop indices) of a common input, or
    # the write and read back of a's result. Sharing a broadcast bias or a scalar saves
    # nothing and would cost b its in-place epilogue.
    a_maps, b_maps = irutil.indexing_maps(a), irutil.indexing_maps(b)
    a_inputs = {a.operands[i] for i in range(a_in) if _identity(a_maps[i])}
    a_results = list(a.results)
    if not any(b.operands[i] in a_results or (b.operands[i] in a_inputs and
                                              _identity(b_maps[i])) for i in range(b_in)):
        return False
    for i in range(b_in):
        if b.operands[i] in a_results and not _identity(b_maps[i]):
            return False  # reads a's result at another element: a true dependency
    for result in a_results:  # a's results are not used before b
        for use in result.uses:
            user = irutil.as_operation(use.owner)
            if user != b and (user.block != b.block or user.is_before_in_block(b)):
                return False
    return not _depends_on(b, a)


def _depends_on(b, a) -> bool:
    """Whether an operand of b is computed, between a and b, from a's results."""
    seen, todo = set(), [v for v in b.operands if v not in list(a.results)]
    a_results = set(a.results)
    while todo:
        value = todo.pop()
        owner = irutil.defining_op(value)
        if owner is None or owner == a or owner in seen:
            continue
        if owner.block != a.block or owner.is_before_in_block(a):
            continue
        seen.add(owner)
        for v in owner.operands:
            if v in a_results:
                return True
            todo.append(v)
    return False


def _merge(a, b):
    a_in, a_out = irutil.dps_segments(a)
    b_in, b_out = irutil.dps_segments(b)
    a_maps, b_maps = irutil.indexing_maps(a), irutil.indexing_maps(b)
    a_results = list(a.results)
    inputs, maps = [], []
    for i in range(a_in):
        inputs.append(a.operands[i])
        maps.append(a_maps[i])
    b_arg = {}  # b's input index -> ("in", merged index) or ("a", a's result index)
    for i in range(b_in):
        value = b.operands[i]
        if value in a_results:
            b_arg[i] = ("a", a_results.index(value))
            continue
        for j, (v, m) in enumerate(zip(inputs, maps)):
            if v == value and m == b_maps[i]:
                b_arg[i] = ("in", j)
                break
        else:
            b_arg[i] = ("in", len(inputs))
            inputs.append(value)
            maps.append(b_maps[i])
    inits = [a.operands[a_in + i] for i in range(a_out)]
    for i in range(b_out):
        init = b.operands[b_in + i]
        owner = irutil.defining_op(init)
        if init in inits and owner is not None and owner.name == "tensor.empty":
            with ir.InsertionPoint(b), b.location:  # one destination per result
                init = owner.clone().results[0]
        inits.append(init)
    maps += a_maps[a_in:] + b_maps[b_in:]
    result_types = [r.type for r in a.results] + [r.type for r in b.results]
    with ir.InsertionPoint(b), b.location:
        merged = ir.Operation.create(
            "linalg.generic", results=result_types, operands=inputs + inits,
            attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                        "iterator_types": a.attributes["iterator_types"],
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get(
                            [len(inputs), len(inits)])},
            regions=1)
    scalar = lambda v: ir.ShapedType(v.type).element_type  # noqa: E731
    block = merged.regions[0].blocks.append(*[scalar(v) for v in inputs + inits])
    args = list(block.arguments)
    n = len(inputs)
    a_block, b_block = a.regions[0].blocks[0], b.regions[0].blocks[0]
    mapping = {a_block.arguments[i]: args[i] for i in range(a_in)}
    mapping.update({a_block.arguments[a_in + i]: args[n + i] for i in range(a_out)})
    with ir.InsertionPoint(block):
        a_ops = list(a_block.operations)
        irutil.clone_ops(a_ops[:-1], mapping)
        a_yield = [mapping.get(v, v) for v in a_ops[-1].operands]
        for i in range(b_in):
            kind, j = b_arg[i]
            mapping[b_block.arguments[i]] = a_yield[j] if kind == "a" else args[j]
        mapping.update({b_block.arguments[b_in + i]: args[n + a_out + i] for i in range(b_out)})
        b_ops = list(b_block.operations)
        irutil.clone_ops(b_ops[:-1], mapping)
        b_yield = [mapping.get(v, v) for v in b_ops[-1].operands]
        ir.Operation.create("linalg.yield", operands=a_yield + b_yield)
    for old, new in zip(list(a.results) + list(b.results), merged.results):
        old.replace_all_uses_with(new)
    b.erase()
    a.erase()
    return merged


def _run_block(ops) -> None:
    buckets: dict = {}
    for op in ops:
        if _candidate(op):
            key = _key(op)
            if key is not None:
                buckets.setdefault(key, []).append(op)
    for group in buckets.values():  # each in block order
        i = 0
        while i < len(group):
            a = group[i]
            for j in range(i + 1, len(group)):
                if _fusable(a, group[j]):
                    merged = _merge(a, group[j])  # stands where group[j] stood
                    del group[j]
                    del group[i]
                    group.insert(j - 1, merged)
                    break
            else:
                i += 1


def run(module) -> None:
    # Blocks of functions and loops, not the bodies of linalg ops (which merging erases).
    blocks = [b for b in irutil.blocks(module)
              if not irutil.as_operation(b.owner).name.startswith("linalg.")]
    for block in blocks:
        _run_block([irutil.as_operation(op) for op in block.operations])


PASS = PythonPass(
    argument="mlxc-fuse-siblings",
    summary="elementwise linalg ops over the same loops that read a common input merged "
            "into one op with several results (multi-output fusion)",
    run=run,
)
