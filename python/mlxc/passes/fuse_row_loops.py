"""mlxc-fuse-row-loops: consecutive loops over the same rows become one, and the
temporaries they keep per row become values (or one stack row).

After bufferization a row-wise program (softmax, layernorm, cross-entropy) is a run of
top-level `scf.forall` loops over the same rows: fill max, row max, fill sum, row sum of
exp(x - max), the output. Each pass reads the whole input again, and `max` and `sum` are
temporaries of one value per row, alive together.

1. Consecutive 1-D foralls over the same rows fuse, into the last of them, when
   iteration i of each depends only on iteration i of the earlier ones: every memref
   one writes and another accesses is reached, in all of them, through the same value
   (an allocation, an argument or one view of it; different roots do not alias, the
   caller's buffers being distinct) and only at the loop's own row: `subview M[iv, ...]`
   of size 1 there (its uses only accesses, subviews or linalg ops inside it), or a
   transfer, load or store at `M[iv, ...]` whose vector does not span that dimension.
   Any other index, a memref passed to another op (a call, a linalg op on the whole
   buffer), or an op between the loops other than allocations, views and scalar
   arithmetic (which touch no memory) blocks it.
   A fill of a temporary or output of one value per row (a forall over other tiles, a
   plain fill, or a copy of a filled buffer) joins as a store at the row when it has as
   many rows as the loop and nothing before the fill touches it: the fused loop still
   writes all of it.
   Fusion must not keep a temporary alive longer (peak memory would grow where early
   frees and mlxc-temps-in-results reused it): a temporary whose last use comes before
   the last loop must be removed by step 2.
2. A temporary (memref.alloc and its frees) used only inside one row loop and only at
   its row needs no buffer. One value per row, written at the top level of the body:
   each read takes the value last written (an SSA value: registers, and the loop may
   still run on the thread pool). A small row (up to 1 KiB) when the loop runs on one
   thread anyway (mlxc-parallelize-tile-loops's criterion): the loop becomes an scf.for
   and the row a `memref.alloca` before it, a stack slot reused by every iteration,
   which is not temporary memory (XLA does not count its stack either). A larger row,
   or a loop for the thread pool, keeps its buffer: each thread would need its own
   row, and an alloca per iteration grows the stack with every row.
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import arith, ir, scf
from . import PythonPass
from .parallelize_tile_loops import MIN_WORK, forall_trips, work

_VIEWS = {"memref.subview", "memref.reinterpret_cast", "memref.expand_shape",
          "memref.collapse_shape", "memref.cast"}
# Ops that touch memory only at their indices (operand after the memref: the first index).
_INDEXED = {"vector.transfer_read", "vector.transfer_write", "memref.load", "memref.store",
            "vector.load", "vector.store"}
_READS = {"vector.transfer_read", "memref.load", "vector.load"}
# Ops allowed between fused loops: they touch no memory, so the earlier loops' bodies
# may move after them, into the last loop.
_MOVABLE_DIALECTS = ("arith.", "index.", "ub.")
_MOVABLE = {"affine.apply", "memref.alloc", "vector.broadcast", "vector.splat"} | _VIEWS
_DYNAMIC = -(2 ** 63)
_FILLS = ("vector.transfer_write", "linalg.fill", "memref.copy")


def _root(value):
    """The allocation or argument a memref value views."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _row_space(op) -> int | None:
    """The row count of a 1-D forall from 0 step 1 with static bounds, else None."""
    if op.name != "scf.forall" or op.results:
        return None
    lbs, ubs, steps = (list(ir.DenseI64ArrayAttr(op.attributes[k])) for k in
                       ("staticLowerBound", "staticUpperBound", "staticStep"))
    if len(ubs) != 1 or lbs != [0] or steps != [1] or ubs[0] == _DYNAMIC:
        return None
    return ubs[0]


class _Access:
    """How one loop (or group of loops) reaches one root memref."""

    def __init__(self):
        self.bases: list = []   # the values it is reached through
        self.at_row = True      # every access at the loop's row, through those bases
        self.writes = False

    def add_base(self, base) -> None:
        if all(b != base for b in self.bases):
            self.bases.append(base)


def _vector_spans_dim0(op, pos: int) -> bool:
    """Whether the vector of a transfer/vector.load at operand `pos` covers more than one
    element of the memref's dimension 0."""
    mtype = ir.MemRefType(op.operands[pos].type)
    vtype = None
    for v in list(op.results) + list(op.operands):
        if isinstance(v.type, ir.VectorType):
            vtype = ir.VectorType(v.type)
            break
    if vtype is None:
        return False
    if op.name in ("vector.load", "vector.store"):
        # The vector covers the trailing dimensions.
        lead = mtype.rank - vtype.rank
        return lead <= 0 and vtype.shape[0] != 1
    perm = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    for k, expr in enumerate(perm.results):
        if isinstance(expr, ir.AffineDimExpr) and expr.position == 0 \
                and vtype.shape[k] != 1:
            return True
    return False


class _Inside:
    """`value in _Inside(loop)`: whether `loop` defines `value` (memoized)."""

    def __init__(self, loop):
        self.loop, self.known = loop, {}

    def __contains__(self, value) -> bool:
        known = self.known.get(value)
        if known is None:
            known = self.known[value] = _defined_inside(value, self.loop)
        return known


def _uses_stay_in_row(value, inside) -> tuple[bool, bool]:
    """(only accessed in place, written) for the uses of a row subview's result."""
    ok, writes = True, False
    for use in value.uses:
        user = irutil.as_operation(use.owner)
        if user.name == "memref.subview" and use.operand_number == 0:
            sub_ok, sub_writes = _uses_stay_in_row(user.results[0], inside)
            ok, writes = ok and sub_ok, writes or sub_writes
        elif user.name in _INDEXED:
            writes = writes or user.name not in _READS
        elif user.name.startswith("linalg.") or user.name == "memref.copy":
            # Structured ops stay inside the views they are given.
            writes = True
        else:
            return False, True
    return ok, writes


# Ops that take no memref operand: not looked at (reading each operand's type is most
# of this pass's time on unrolled vector code).
_VALUE_ONLY = ("arith.", "math.", "index.", "ub.", "complex.", "affine.apply")
_VECTOR_VALUES = {"vector.extract", "vector.insert", "vector.broadcast", "vector.to_elements",
                  "vector.from_elements", "vector.fma", "vector.extract_strided_slice",
                  "vector.insert_strided_slice", "vector.shuffle", "vector.reduction",
                  "vector.contract", "vector.transpose", "vector.shape_cast", "vector.splat",
                  "vector.bitcast", "vector.multi_reduction", "vector.outerproduct"}


# The operands that may be memrefs, of the accesses that take indices (which are of
# type index): the others' types are not read.
_MEMREF_OPERANDS = {"memref.load": (0,), "memref.store": (0, 1), "vector.load": (0,),
                    "vector.store": (1,), "vector.transfer_read": (0,),
                    "vector.transfer_write": (1,), "memref.subview": (0,)}


def _defined_inside(value, loop) -> bool:
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    while op is not None and op.name != "func.func":
        if op == loop:
            return True
        op = op.parent
    return False


def _nested(op) -> list:
    """The ops nested in `op`, pre-order (the walk's callback only collects them: the
    names are read afterwards, in one comprehension)."""
    return irutil.walk(op)[1:]


def _loop_accesses(loop, iv) -> dict:
    """root -> _Access for the memrefs `loop` reaches from outside."""
    ops = _nested(loop)
    inside = _Inside(loop)
    accesses: dict = {}
    for o, name in zip(ops, [o.name for o in ops]):
        if name.startswith(_VALUE_ONLY) or name in _VECTOR_VALUES:
            continue
        operands = o.operands
        at = _MEMREF_OPERANDS.get(name)
        for pos, v in enumerate(operands) if at is None else ((p, operands[p]) for p in at):
            if not isinstance(v.type, ir.MemRefType) or v in inside:
                continue
            acc = accesses.setdefault(_root(v), _Access())
            acc.add_base(v)
            name = o.name
            if name == "memref.subview" and pos == 0:
                static = list(ir.DenseI64ArrayAttr(o.attributes["static_offsets"]))
                sizes = list(ir.DenseI64ArrayAttr(o.attributes["static_sizes"]))
                if static[0] != _DYNAMIC or sizes[0] != 1 or o.operands[1] != iv:
                    acc.at_row = False
                ok, writes = _uses_stay_in_row(o.results[0], inside)
                acc.at_row = acc.at_row and ok
                acc.writes = acc.writes or writes
            elif name in _INDEXED and pos + 1 < len(o.operands) and \
                    ir.MemRefType(v.type).rank >= 1 and o.operands[pos + 1] == iv and \
                    (name.startswith("memref.") or not _vector_spans_dim0(o, pos)):
                acc.writes = acc.writes or name not in _READS
            else:
                acc.at_row = False
                acc.writes = acc.writes or name not in _READS
    return accesses


def _merge(into: dict, other: dict) -> None:
    for root, acc in other.items():
        mine = into.setdefault(root, _Access())
        for b in acc.bases:
            mine.add_base(b)
        mine.at_row = mine.at_row and acc.at_row
        mine.writes = mine.writes or acc.writes


def _independent(group: dict, new: dict) -> bool:
    """Whether iteration i of the loop `new` describes depends only on iteration i of
    the group's loops."""
    for root, acc in new.items():
        mine = group.get(root)
        if mine is None or not (acc.writes or mine.writes):
            continue
        bases = list(mine.bases)
        for b in acc.bases:
            if all(b != x for x in bases):
                bases.append(b)
        if not (acc.at_row and mine.at_row and len(bases) == 1):
            return False
    return True


def _splat(value):
    """The scalar attribute a constant splat vector (or scalar constant) holds, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        return attr.get_splat_value() if attr.is_splat else None
    return attr if isinstance(value.type, (ir.FloatType, ir.IntegerType)) else None


class _Fill:
    """A forall that only writes one constant into one temporary (over its own tiles)."""

    def __init__(self, loop, target, scalar):
        self.loop, self.target, self.scalar = loop, target, scalar


# The ops a fill's body may hold (and its terminator): a loop body with any other op is
# no fill, known at that op without listing the rest of a long body.
_FILL_BODY = {"affine.apply", "arith.constant", "memref.subview", "vector.transfer_write",
              "linalg.fill", "scf.forall.in_parallel"}


def _fill_body(loop) -> list | None:
    """The ops of a forall's body but its terminator, or None when one of them cannot
    be part of a fill."""
    body: list = []
    other: list = []
    state = {"root": True}
    advance, skip, stop = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP, ir.WalkResult.INTERRUPT

    def visit(op):
        if state["root"]:
            state["root"] = False
            return advance
        if op.name in _FILL_BODY:
            body.append(op)
            return skip
        other.append(op)
        return stop

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)
    return None if other else body[:-1]


def _as_fill(loop, func_ops: list, index: int) -> _Fill | None:
    """`loop` as a _Fill: a forall that only fills a temporary, or such a fill on its own
    (small programs are not tiled)."""
    if loop.name == "memref.copy":
        body, targets, scalars = [], [loop.operands[1]], [_filled_with(loop, func_ops, index)]
    elif loop.name in _FILLS:
        body, targets, scalars = [loop], [], []
    elif loop.name != "scf.forall" or loop.results:
        return None
    else:
        body, targets, scalars = _fill_body(loop), [], []
        if body is None:
            return None
    for o in body:
        o = o.operation
        if o.name in ("affine.apply", "arith.constant"):
            continue
        if o.name == "memref.subview":
            if any(irutil.as_operation(u.owner).name not in ("vector.transfer_write",
                                                              "linalg.fill")
                   for u in o.results[0].uses):
                return None
            continue
        if o.name == "vector.transfer_write":
            scalars.append(_splat(o.operands[0]))
            targets.append(o.operands[1])
        elif o.name == "linalg.fill" and len(o.operands) == 2:
            scalars.append(_splat(o.operands[0]))
            targets.append(o.operands[1])
        else:
            return None
    if len(targets) != 1 or scalars[0] is None:
        return None
    target = _root(targets[0])
    if not hasattr(scalars[0], "type") or \
            scalars[0].type != ir.MemRefType(target.type).element_type:
        return None
    # A temporary, or an output argument (the caller's buffer: its old contents are not
    # read, inputs are never written).
    if not (isinstance(target.owner, ir.Block) or target.owner.name == "memref.alloc"):
        return None
    mtype = ir.MemRefType(target.type)
    if not mtype.has_static_shape or mtype.rank < 1 or any(d != 1 for d in mtype.shape[1:]):
        return None
    # Nothing before the fill may touch it: rows the fill skipped were never written, so
    # filling them too changes nothing. (What comes after the fill and is not fused
    # sees it whole: the fused loop fills every row.) Its views at the top level are
    # not followed.
    for use in target.uses:
        user = irutil.as_operation(use.owner)
        if user.name == "memref.dealloc":
            continue
        if _top(user, func_ops) < index:
            return None
    return _Fill(loop, target, scalars[0])


def _filled_with(copy, func_ops: list, index: int):
    """The constant a top-level memref.copy copies: its source a temporary that one whole
    fill before it writes, nothing else (mlxc-unshare-fills leaves a fill shared by two
    reductions as a fill and a copy). None otherwise."""
    src, dst = copy.operands[0], copy.operands[1]
    if src.type != dst.type or isinstance(src.owner, ir.Block) or \
            src.owner.name != "memref.alloc":
        return None
    shape = list(ir.MemRefType(src.type).shape)
    scalar = None
    for use in src.uses:
        user = irutil.as_operation(use.owner)
        if user.name == "memref.dealloc" or _top(user, func_ops) >= index:
            continue  # the copy itself and what comes after it
        if scalar is not None or user.parent is None or user.parent.name != "func.func":
            return None
        if user.name == "linalg.fill" and len(user.operands) == 2 and user.operands[1] == src:
            scalar = _splat(user.operands[0])
        elif user.name == "vector.transfer_write" and user.operands[1] == src and \
                list(ir.VectorType(user.operands[0].type).shape) == shape and \
                all(irutil.constant_int(v) == 0 for v in list(user.operands)[2:2 + len(shape)]) and \
                len(user.operands) == 2 + len(shape):
            scalar = _splat(user.operands[0])
        else:
            return None
        if scalar is None:
            return None
    return scalar


class _TopLevel(list):
    """A function's top-level ops with their positions (list.index scanned the list on
    each lookup: half of this pass's time on a 12-layer model). Positions are only
    compared, so fusion, which erases loops and adds no top-level op, leaves the others'
    valid: the erased ones are forgotten before they go."""

    def __init__(self, func):
        super().__init__(irutil.top_level_ops(func))
        self.positions = {op: i for i, op in enumerate(self)}

    def forget(self, ops) -> None:
        for op in ops:
            self.positions.pop(op, None)


def _position(op, ops: list) -> int:
    if isinstance(ops, _TopLevel):
        return ops.positions.get(op, -1)
    try:
        return ops.index(op)  # compares in C: the same wrapper first, then ==
    except ValueError:
        return -1


def _fill_access(fill: _Fill) -> dict:
    acc = _Access()
    acc.add_base(fill.target)
    acc.writes = True
    return {fill.target: acc}


def _copy(accesses: dict) -> dict:
    out: dict = {}
    _merge(out, accesses)
    return out


_MAX_ROW_BYTES = 1024  # a larger row on the stack would be temporary memory by another name


def _row_bytes(mtype) -> int:
    count = 1
    for d in mtype.shape[1:]:
        count *= d
    width = getattr(mtype.element_type, "width", None) or 64
    return count * max(1, width // 8)


def _top(op, func_ops: list) -> int:
    return _position(irutil.top_level_ancestor(op), func_ops)


def _span(root, func_ops: list) -> tuple[int, int] | None:
    """The first and last top-level ops that use `root` (its frees aside)."""
    positions = []
    pending = [root]
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = irutil.as_operation(use.owner)
            if user.name == "memref.dealloc":
                continue
            if user.name in _VIEWS and user.parent is not None and user.parent.name == "func.func":
                pending.extend(user.results)
            positions.append(_top(user, func_ops))
    return (min(positions), max(positions)) if positions else None


def _extends_a_temporary(group: list, accesses: dict, rows, func_ops: list,
                         works: dict, spans: dict) -> bool:
    """Whether fusing `group` (at its last loop) would keep some temporary alive longer:
    one it uses whose last use comes before that loop, unless fusion removes it (a row
    temporary used only there, of one value per row, or of a small row when the loop
    stays on one thread). Peak temporary memory must not grow. `works`: each loop's
    work by its index in `group`, filled as needed; `spans`: each root's `_span`, valid
    while `func_ops` is."""
    first = _position(group[0].loop if isinstance(group[0], _Fill) else group[0], func_ops)
    last = _position(group[-1], func_ops)
    alone = None
    for root, acc in accesses.items():
        if isinstance(root.owner, ir.Block) or root.owner.name != "memref.alloc":
            continue
        if root not in spans:
            spans[root] = _span(root, func_ops)
        span = spans[root]
        if span is None or span[1] >= last:
            continue
        mtype = ir.MemRefType(root.type)
        if not (span[0] >= first and span[1] <= last and acc.at_row and len(acc.bases) == 1
                and acc.bases[0] == root and mtype.has_static_shape and mtype.rank >= 1
                and mtype.shape[0] == rows):
            return True
        if all(d == 1 for d in mtype.shape[1:]):
            continue
        if alone is None:
            need = -(-MIN_WORK // max(rows or 1, 1))
            alone = settings.get("threads") < 2 or rows is None or rows < 2
            for k, loop in enumerate(group):
                if alone or isinstance(loop, _Fill):
                    continue
                if k not in works:
                    works[k] = work(loop, need)
            alone = alone or sum(works.get(k, 0) for k in range(len(group))) < need
        if not alone or _row_bytes(mtype) > _MAX_ROW_BYTES:
            return True
    return False


def _fuse(items: list) -> object:
    """Fuse `items` (row loops and _Fills in program order, the last a loop) into that
    last loop, where every value the others use is defined already (the ops between them
    touch no memory); returns it. The others are erased."""
    target = items[-1]
    block = target.regions[0].blocks[0]
    iv = block.arguments[0]
    anchor = next(irutil.top_level_ops(target))  # earlier items go before, in order
    index = ir.IndexType.get()
    zero = None
    with target.location:
        for item in items[:-1]:
            if isinstance(item, _Fill):
                mtype = ir.MemRefType(item.target.type)
                with ir.InsertionPoint(target):
                    value = arith.ConstantOp(mtype.element_type, item.scalar).result
                    if mtype.rank > 1 and zero is None:
                        zero = arith.ConstantOp(index, 0).result
                with ir.InsertionPoint(anchor):
                    ir.Operation.create("memref.store", operands=[value, item.target, iv]
                                        + [zero] * (mtype.rank - 1))
                continue
            other = item.regions[0].blocks[0]
            other.arguments[0].replace_all_uses_with(iv)
            for o in list(irutil.top_level_ops(item))[:-1]:
                o.move_before(anchor)
    for item in items[:-1]:
        (item.loop if isinstance(item, _Fill) else item).erase()
    return target


def _fuse_in(func) -> list:
    """Fuse the row loops of `func`'s body; returns the row loops left (fused or not),
    each with how it reaches each memref."""
    func_ops = _TopLevel(func)
    # Runs of foralls with only ops that touch no memory between them.
    runs, current = [], []
    for op in func_ops:
        if (op.name == "scf.forall" and not op.results) or op.name in _FILLS:
            current.append(op)
        elif (op.name in _MOVABLE or op.name.startswith(_MOVABLE_DIALECTS)) and not op.regions:
            continue
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    loops = []
    # What depends on func_ops (positions, and uses that fusion moves): kept until the
    # next fusion. Keys are values and run indices, never ops that fusion erases.
    spans: dict = {}
    for run in runs:
        i, analysed, fills = 0, {}, {}
        while i < len(run):
            group, accesses, rows, snapshots = [], {}, None, []
            j = i
            while j < len(run):
                op = run[j]
                # A fill joins as a fill, whatever its own tiles.
                if j not in fills:
                    fills[j] = _as_fill(op, func_ops, _position(op, func_ops))
                fill = fills[j]
                n = None if fill is not None else _row_space(op)
                if n is None and fill is None:
                    break
                if fill is not None:
                    if rows is not None and ir.MemRefType(fill.target.type).shape[0] != rows:
                        break
                    new = _fill_access(fill)
                    if not _independent(accesses, new):
                        break
                    group.append(fill)
                    _merge(accesses, new)
                    snapshots.append(_copy(accesses))
                else:
                    if rows is not None and n != rows:
                        break
                    if any(isinstance(g, _Fill) and ir.MemRefType(g.target.type).shape[0] != n
                           for g in group):
                        break
                    if j not in analysed:  # a loop is analysed once per run
                        analysed[j] = _loop_accesses(op, op.regions[0].blocks[0].arguments[0])
                    new = analysed[j]
                    if not _independent(accesses, new):
                        break
                    rows = n
                    group.append(op)
                    _merge(accesses, new)
                    snapshots.append(_copy(accesses))
                j += 1
            # The longest prefix ending with a loop that keeps every temporary's lifetime.
            k, works = len(group), {}
            while k > 0 and (isinstance(group[k - 1], _Fill) or _extends_a_temporary(
                    group[:k], snapshots[k - 1], rows, func_ops, works, spans)):
                k -= 1
            if k == 0 or (k == 1 and rows is None):
                i += 1
                continue
            end = i + _position(group[k - 1], run[i:])  # run[:i] may hold erased loops
            group = group[:k]
            if sum(not isinstance(g, _Fill) for g in group) == 0:
                i += 1
                continue
            if len(group) > 1:
                func_ops.forget(g.loop if isinstance(g, _Fill) else g for g in group[:-1])
                loops.append((_fuse(group), snapshots[k - 1]))
                spans, fills = {}, {}
            else:
                loops.append((group[0], snapshots[k - 1]))
            i = end + 1
    return loops


def _runs_alone(loop) -> bool:
    """Whether mlxc-parallelize-tile-loops would leave `loop` on the caller's thread."""
    trips = forall_trips(loop)
    if settings.get("threads") < 2 or trips is None or trips < 2:
        return True
    need = -(-MIN_WORK // trips)
    return work(loop, need) < need


def _row_temporaries(loop, accesses: dict) -> list:
    """The allocations only `loop` uses, only at its row and directly (`accesses`: how
    the loop reaches each memref)."""
    rows = _row_space(loop)
    temps = []
    for root, acc in accesses.items():
        if isinstance(root.owner, ir.Block) or root.owner.name != "memref.alloc":
            continue
        mtype = ir.MemRefType(root.type)
        if not (acc.at_row and len(acc.bases) == 1 and acc.bases[0] == root
                and mtype.has_static_shape and mtype.rank >= 1 and mtype.shape[0] == rows
                and not list(root.owner.operands)):
            continue
        ok = True
        for use in root.uses:
            user = irutil.as_operation(use.owner)
            if user.name == "memref.dealloc":
                continue
            if irutil.top_level_ancestor(user) != loop:
                ok = False
                break
        if ok:
            temps.append(root)
    return temps


def _to_for(loop, temps: list) -> None:
    """`loop` as an scf.for; each temporary in `temps` an alloca of one row before it."""
    index = ir.IndexType.get()
    rows = _row_space(loop)
    with loop.location, ir.InsertionPoint(loop):
        lb, ub, step = (arith.ConstantOp(index, v).result for v in (0, rows, 1))
        zero = arith.ConstantOp(index, 0).result
        rows_of = []
        for temp in temps:
            alloc = temp.owner
            mtype = ir.MemRefType(temp.type)
            row = ir.MemRefType.get([1] + list(mtype.shape[1:]), mtype.element_type,
                                    memory_space=mtype.memory_space)
            attrs = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}
            if "alignment" in alloc.attributes:
                attrs["alignment"] = alloc.attributes["alignment"]
            rows_of.append(ir.Operation.create("memref.alloca", results=[row],
                                               attributes=attrs).result)
        new = scf.ForOp(lb, ub, step)
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    with loop.location, ir.InsertionPoint(new.body):
        yield_op = scf.YieldOp([])
    for o in list(irutil.top_level_ops(loop))[:-1]:
        o.move_before(yield_op.operation)
    iv.replace_all_uses_with(new.induction_variable)
    for temp, row in zip(temps, rows_of):
        deallocs = []
        for use in list(temp.uses):
            user = irutil.as_operation(use.owner)
            if user.name == "memref.dealloc":
                deallocs.append(user)
                continue
            pos = use.operand_number
            user.operands[pos + 1] = zero  # the row: validated to be the induction variable
            user.operands[pos] = row
        for d in deallocs:
            d.erase()
        temp.owner.erase()
    loop.erase()


def _row_accesses(value, found: list) -> bool:
    """Collect the reads and writes of `value`, through subviews, into `found`
    ((op, kind) with kind "read", "write" or "view"); False at any other use."""
    for use in value.uses:
        user = irutil.as_operation(use.owner)
        if user.name == "memref.subview" and use.operand_number == 0:
            if not _row_accesses(user.results[0], found):
                return False
            found.append((user, "view"))
        elif user.name in _READS and use.operand_number == 0:
            if user.name == "vector.transfer_read" and len(user.operands) > 2 + \
                    ir.MemRefType(value.type).rank:
                return False  # masked
            if not _single(user.results[0].type) and not _broadcast_read(user):
                return False  # lanes past the one value would read the padding
            found.append((user, "read"))
        elif user.name in _INDEXED and user.name not in _READS and use.operand_number == 1:
            if user.name == "vector.transfer_write" and len(user.operands) > 2 + \
                    ir.MemRefType(value.type).rank:
                return False
            found.append((user, "write"))
        elif user.name == "memref.dealloc":
            continue
        else:
            return False
    return True


def _broadcast_read(op) -> bool:
    """Whether a transfer_read repeats one element in every lane."""
    if op.name != "vector.transfer_read":
        return False
    perm = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    return all(isinstance(e, ir.AffineConstantExpr) for e in perm.results)


def _single(t) -> bool:
    """Whether a scalar or vector type holds one element."""
    return not isinstance(t, ir.VectorType) or all(d == 1 for d in ir.VectorType(t).shape)


def _forward(loop, temp) -> bool:
    """Replace a temporary of one element per row, written only at the top level of
    `loop`'s body, by the values written: each read takes the last value written before
    it in the same iteration. False, with nothing changed, when that is not possible."""
    mtype = ir.MemRefType(temp.type)
    if any(d != 1 for d in mtype.shape[1:]):
        return False
    found: list = []
    if not _row_accesses(temp, found):
        return False
    body_ops = list(irutil.top_level_ops(loop))
    etype = mtype.element_type

    def position(op) -> int:
        while True:
            parent = op.parent
            if parent is None:
                return -1
            if parent == loop:
                break
            op = parent
        for i, o in enumerate(body_ops):
            if o == op:
                return i
        return -1

    events = []
    for op, kind in found:
        if kind == "view":
            continue
        at = position(op)
        if at < 0 or (kind == "write" and body_ops[at] != op):
            return False  # a write nested in a loop or a branch of the body
        value = op.operands[0] if kind == "write" else op.results[0]
        if value.type != etype and not (isinstance(value.type, ir.VectorType)
                                         and ir.VectorType(value.type).element_type == etype):
            return False
        if kind == "write" and not _single(value.type):
            return False
        events.append((at, 0 if kind == "write" else 1, op, kind))
    events.sort(key=lambda e: (e[0], e[1]))
    written = None
    for _, _, op, kind in events:
        if kind == "write":
            written = op
        elif written is None:
            return False  # read before this iteration writes it
    # Rewrite: values for each read, built right after the write it reads.
    written, scalar_of, cache = None, {}, {}
    with loop.location:
        for at, _, op, kind in events:
            if kind == "write":
                written, value = at, op.operands[0]
                cache = {value.type: value}
                scalar_of[at] = value
                continue
            want = op.results[0].type
            if want not in cache:
                with ir.InsertionPoint(body_ops[written + 1]):
                    scalar = cache.get(etype)
                    if scalar is None:
                        value = scalar_of[written]
                        scalar = ir.Operation.create(
                            "vector.extract", results=[etype], operands=[value],
                            attributes={"static_position": ir.DenseI64ArrayAttr.get(
                                [0] * ir.VectorType(value.type).rank)}).result
                        cache[etype] = scalar
                    if want != etype:
                        cache[want] = ir.Operation.create(
                            "vector.broadcast", results=[want], operands=[scalar]).result
            op.results[0].replace_all_uses_with(cache[want])
    for op, kind in found:
        if kind != "view":
            op.erase()
    for op, kind in found:  # views after their own views (collected inner first)
        if kind == "view":
            op.erase()
    for use in list(temp.uses):
        irutil.as_operation(use.owner).erase()  # the deallocs
    temp.owner.erase()
    return True


def run(module) -> None:
    entry = irutil.string_attr(module, "mlxc.entry")
    funcs = [irutil.find_function(module, entry)] if entry else irutil.functions(module)
    for func in funcs:
        if func is None or func.name != "func.func" or not func.regions[0].blocks:
            continue
        for loop, accesses in _fuse_in(func):
            temps = [t for t in _row_temporaries(loop, accesses) if not _forward(loop, t)
                     and _row_bytes(ir.MemRefType(t.type)) <= _MAX_ROW_BYTES]
            if temps and _runs_alone(loop):
                _to_for(loop, temps)


PASS = PythonPass(
    argument="mlxc-fuse-row-loops",
    summary="Fuse consecutive row loops; per-row temporaries become one-row stack buffers",
    run=run,
)
