"""Which linalg ops the CPU target hands to the runtime's precompiled kernels.

An f32 matrix product with nothing fused into it (linalg.matmul, batch_matmul, or a
generic that is one: transposed or broadcast operands included) calls `mlxc_sgemm`
(runtime/mlxc_gemm.c) instead of being tiled and vectorized here. The kernel runs as
fast as the generated product or faster from 8 rows up (on one thread: 0.82-1.04x its
time on the bench programs' products), and the program no longer spends ~30 ms
tiling, vectorizing and compiling each product through LLVM.

`mlxc-apply-cpu-schedules` sets these ops aside untouched (set_aside below) and
`mlxc-library-matmuls` turns them into calls after bufferization. Products with a fused
prologue or epilogue keep their generated code, where the fusion saves a pass over
memory; so do very thin ones (matrix-vector: fewer rows than MIN_M), where a 6-row
register tile is mostly empty, and tiny ones (under MIN_WORK), which the generated
code fuses into their neighbours, as an RNN step's, 5% faster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ... import irutil, settings
from ..._mlir import ir, linalg
from . import library_convs, library_pools

# Through the call rnn_scan's 16x128x128 steps (under MIN_WORK) ran 5% slower; from 8
# rows and 2^19 multiply-adds every bench program ran as fast or faster (lstm_cell 0.85x,
# transformer_block 0.91x) and compiled in 0.5-0.8x the time. Any contraction length:
# a [1152, 6] x [6, 1000] product (a projection of 6 features) ran 10x faster through
# the kernel than as generated code.
MIN_M, MIN_N, MIN_K = 8, 16, 1
MIN_WORK = 1 << 19  # multiply-adds


@dataclass(frozen=True)
class Matmul:
    """A product's loop dimensions and how each operand (A, B, C) maps onto them."""
    batch: Optional[int]
    m: int
    n: int
    k: int
    maps: tuple          # the operands' indexing maps (AffineMap): A, B, C
    sizes: tuple         # every loop's trip count

    def operand_dims(self, index: int) -> list[int]:
        """For each dimension of operand `index`, the loop it runs along."""
        return [ir.AffineDimExpr(e).position for e in self.maps[index].results]


def _element_type(t: ir.Type) -> Optional[ir.Type]:
    if isinstance(t, (ir.RankedTensorType, ir.MemRefType)):
        return ir.ShapedType(t).element_type
    return None


def _shape(t: ir.Type) -> Optional[list[int]]:
    s = ir.ShapedType(t)
    return list(s.shape) if s.has_static_shape else None


def _default_maps(name: str) -> Optional[list[ir.AffineMap]]:
    d = ir.AffineDimExpr.get
    if name == "linalg.matmul":
        return [ir.AffineMap.get(3, 0, [d(0), d(2)]), ir.AffineMap.get(3, 0, [d(2), d(1)]),
                ir.AffineMap.get(3, 0, [d(0), d(1)])]
    if name == "linalg.batch_matmul":
        return [ir.AffineMap.get(4, 0, [d(0), d(1), d(3)]),
                ir.AffineMap.get(4, 0, [d(0), d(3), d(2)]),
                ir.AffineMap.get(4, 0, [d(0), d(1), d(2)])]
    return None


def _maps(op) -> Optional[list[ir.AffineMap]]:
    if "indexing_maps" in op.attributes:
        arr = ir.ArrayAttr(op.attributes["indexing_maps"])
        return [ir.AffineMapAttr(arr[i]).value for i in range(len(arr))]
    return _default_maps(op.name)


def _multiply_add_body(op) -> bool:
    """out + a * b (either order of the sum), and nothing else."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 3 or [o.name for o in ops] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return False
    a, b, out = block.arguments
    mul, add, yld = ops
    if {mul.operands[0], mul.operands[1]} != {a, b} or mul.operands[0] == mul.operands[1]:
        return False
    mul_v = mul.results[0]
    if not ((add.operands[0] == out and add.operands[1] == mul_v)
            or (add.operands[1] == out and add.operands[0] == mul_v)):
        return False
    return len(yld.operands) == 1 and yld.operands[0] == add.results[0]


def takes(batch: int, m: int, n: int, k: int) -> bool:
    """Whether products of these sizes go to the kernel (the setting included)."""
    return bool(settings.get("library_calls")) and m >= MIN_M and n >= MIN_N and \
        k >= MIN_K and batch * m * n * k >= MIN_WORK


def matmul(op) -> Optional[Matmul]:
    """The product `op` computes, when the runtime's kernel should compute it."""
    if not settings.get("library_calls"):
        return None
    name = op.name
    if name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic"):
        return None
    if len(op.operands) != 3 or len(op.regions) != 1:
        return None
    f32 = ir.F32Type.get()
    shapes = []
    for v in op.operands:
        if _element_type(v.type) != f32:
            return None
        shape = _shape(v.type)
        if shape is None:
            return None
        shapes.append(shape)
    maps = _maps(op)
    if maps is None or len(maps) != 3:
        return None
    if not _multiply_add_body(op) or (name == "linalg.generic"
                                      and not linalg.isa_contraction_op(op)):
        return None
    loops = maps[0].n_dims
    for m_ in maps:
        if m_.n_symbols or not m_.is_projected_permutation:
            return None
    if name == "linalg.generic":
        cd = linalg.infer_contraction_dimensions(op)
        groups = [list(cd.batch), list(cd.m), list(cd.n), list(cd.k)]
    elif name == "linalg.matmul":
        groups = [[], [0], [1], [2]]
    else:
        groups = [[0], [1], [2], [3]]
    if len(groups[0]) > 1 or any(len(g) != 1 for g in groups[1:]):
        return None
    batch = groups[0][0] if groups[0] else None
    m, n, k = groups[1][0], groups[2][0], groups[3][0]
    sizes = [0] * loops
    for shape, map_ in zip(shapes, maps):
        for extent, e in zip(shape, map_.results):
            sizes[ir.AffineDimExpr(e).position] = extent
    info = Matmul(batch, m, n, k, tuple(maps), tuple(sizes))
    want = [{m, k}, {k, n}, {m, n}]
    for i in range(3):
        dims = info.operand_dims(i)
        if set(dims) - {batch} != want[i] or len(dims) != len(set(dims)):
            return None
    if batch is not None and batch not in info.operand_dims(2):
        return None
    if not takes(sizes[batch] if batch is not None else 1, sizes[m], sizes[n], sizes[k]):
        return None
    return info


# ---- keeping the products away from the vectorizer ----
#
# mlxc-apply-cpu-schedules vectorizes every linalg op of a function, scheduled or not
# (an op without a schedule becomes one vector of its whole iteration space, which is
# right for small ops and ruinous for a 1024^3 product). So before it runs, each
# product (and the zero fill of its output) moves into a function of its own inside a
# nested module the vectorizer never looks at, and the product's place holds a call
# to a declaration of that function; afterwards the ops come back in place of the
# calls. mlxc-library-matmuls then finds them, bufferized, and calls the kernel.

SET_ASIDE = "mlxc_set_aside"


def _module_body(module):
    return irutil.as_operation(module).regions[0].blocks[0]


def _is_stash(op) -> bool:
    return op.name == "builtin.module" and "sym_name" in op.attributes and \
        irutil.sym_name(op) == SET_ASIDE


def _stash(module):
    return next((op for op in _module_body(module).operations if _is_stash(op)), None)


def is_set_aside(op) -> bool:
    """Whether `op` is one of the ops set aside (its schedule is none)."""
    func = op.parent
    if func is None or func.name != "func.func":
        return False
    holder = func.parent
    return holder is not None and _is_stash(holder)


def _zero_fill_of(value, user):
    """The linalg.fill of zero that defines `value`, when `user` is its only user."""
    fill = irutil.defining_op(value)
    if fill is None or fill.name != "linalg.fill" or len(fill.operands) != 2:
        return None
    if not irutil.is_zero_constant(fill.operands[0]):
        return None
    uses = list(fill.results[0].uses)
    if len(uses) != 1 or irutil.as_operation(uses[0].owner) != user:
        return None
    return fill


def set_aside(module) -> None:
    products = [op for op in irutil.ops_named(module, "linalg.matmul", "linalg.batch_matmul",
                                              "linalg.generic")
                if all(isinstance(v.type, ir.RankedTensorType) for v in op.operands)
                and len(op.results) == 1 and matmul(op) is not None]
    products += [op for op in irutil.ops_named(module, *library_convs.CONVS)
                 if library_convs.conv(op) is not None]
    pools = [op for op in irutil.ops_named(module, *library_pools.POOLS)
             if library_pools.pool(op) is not None]
    # Whether each is a pool, decided now: the loop below erases the ops it has moved,
    # and comparing an op with an erased one (`op in pools`) raises.
    is_pool = [False] * len(products) + [True] * len(pools)
    products += pools
    if not products:
        return
    body = _module_body(module)
    with irutil.as_operation(module).context, ir.Location.unknown():
        stash = _stash(module)
        if stash is None:
            with ir.InsertionPoint(body):
                stash = ir.Operation.create("builtin.module", regions=1, attributes={
                    "sym_name": ir.StringAttr.get(SET_ASIDE)})
            stash.regions[0].blocks.append()
        stash_body = stash.regions[0].blocks[0]
        for n, op in enumerate(products):
            fill = _zero_fill_of(op.operands[2], op)
            transpose = None
            if op.name in library_convs.CONVS:
                if fill is None:
                    # A zero fill cse shared between convolutions goes along as a copy:
                    # left here, the vectorizer would make it something the call cannot
                    # drop.
                    fill = library_convs.zero_fill(op.operands[2])
                # The transpose that makes its filter HWIO (used by it alone) moves too:
                # the call then reads the filter it transposes in place.
                transpose = (library_convs.filter_transpose(op) or (None,))[0]
            elif is_pool[n]:
                # Its init's fill of the identity goes along (a copy, if shared): the
                # vectorizer would make it loops, and the call could not drop it.
                fill = library_pools.init_as_fill(op)
            elif fill is None:
                # A zero fill cse shared between products (q, k and v of one input) goes
                # along as a copy too: left here, it became a loop nest of its own
                # before each call, which then added to C instead of writing it.
                fill = library_convs.zero_fill(op.operands[2])
            moved = ([transpose] if transpose is not None else []) + \
                ([fill] if fill is not None else []) + [op]
            inner = {r for o in moved for r in o.results}
            args = []
            for o in moved:
                for v in o.operands:
                    if v not in inner and v not in args:
                        args.append(v)
            name = f"{SET_ASIDE}_{n}"
            result_type = op.results[0].type
            ftype = ir.TypeAttr.get(ir.FunctionType.get([v.type for v in args], [result_type]))
            with ir.InsertionPoint(body):
                ir.Operation.create("func.func", regions=1, attributes={
                    "sym_name": ir.StringAttr.get(name), "function_type": ftype,
                    "sym_visibility": ir.StringAttr.get("private")})
            with ir.InsertionPoint(stash_body):
                holder = ir.Operation.create("func.func", regions=1, attributes={
                    "sym_name": ir.StringAttr.get(name), "function_type": ftype})
            block = holder.regions[0].blocks.append(*[v.type for v in args])
            mapping = dict(zip(args, block.arguments))
            with ir.InsertionPoint(block):
                irutil.clone_ops(moved, mapping)
                ir.Operation.create("func.return", operands=[mapping[op.results[0]]])
            with ir.InsertionPoint(op), op.location:
                call = ir.Operation.create("func.call", results=[result_type], operands=args,
                                           attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
            op.results[0].replace_all_uses_with(call.results[0])
            op.erase()
            if fill is not None and not list(fill.results[0].uses):
                fill.erase()
            if transpose is not None:
                transpose.erase()


def put_back(module) -> None:
    stash = _stash(module)
    if stash is None:
        return
    holders = {irutil.sym_name(f): f for f in stash.regions[0].blocks[0].operations}
    calls = [op for op in irutil.ops_named(module, "func.call")
             if ir.FlatSymbolRefAttr(op.attributes["callee"]).value in holders
             and not is_set_aside(op)]
    for call in calls:
        holder = holders[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
        block = holder.regions[0].blocks[0]
        mapping = dict(zip(block.arguments, call.operands))
        *body, ret = list(block.operations)
        with ir.InsertionPoint(call):
            irutil.clone_ops(body, mapping)
        call.results[0].replace_all_uses_with(mapping[ret.operands[0]])
        call.erase()
    declared = [f for f in irutil.functions(module) if f.name == "func.func"
                and irutil.sym_name(f) in holders]
    for f in declared:
        f.erase()
    stash.erase()
