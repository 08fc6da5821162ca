"""mlxc-gpu-tile-matmul: every float contraction as a kernel tiled through shared memory.

A contraction is any linalg op computing C[batch.., m, n] += A[..] * B[..] over one
reduction dimension k, whatever its indexing maps: linalg.matmul and batch_matmul,
and the linalg.generic that a dot_general of any layout becomes (several batch
dimensions, 3-D x 2-D products, a transposed operand, batch dimensions an operand
lacks). Each operand's indices are read from its map, so one kernel serves them all,
as XLA reduces every dot to one canonical form before emitting it.

Each block of 16 x 16 threads computes a (16 TM) x (16 TN) tile of C, each thread
TM x TN outputs held in registers (rows ty + 16 i, columns tx + 16 j: neighbouring
threads touch neighbouring columns, so shared-memory reads are conflict-free and the
stores coalesce). K is walked in steps of 16: the block copies a 16 x (16 TM) slice of
A and a 16 x (16 TN) slice of B into shared memory, the threads of a warp reading
along whichever dimension is contiguous in each operand, synchronises, and each
thread does TM x TN multiply-adds per k from 2 (TM + TN) shared-memory reads.
Out-of-range elements load as zero, so any M, N, K work. The sum is added to C, which
the contraction accumulates into. bf16/f16 operands extended to f32 in the body
(`arith.extf`) are extended as they are loaded.

Batch dimensions are the grid's z (delinearised), m its y, n its x. Products that
fill the GPU with 128 x 128 tiles use TM = TN = 8; smaller ones 64 x 64 tiles.
Integer contractions, views and bodies other than multiply-add keep the generic path.
"""

from __future__ import annotations

import math

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass

TILE_K = 16
THREADS = 16            # threads per block along each of x and y
WAVE_BLOCKS = 132       # an H100/H200's multiprocessors: blocks in one wave
_WG = "#gpu.address_space<workgroup>"

_NAMED_MAPS = {
    "linalg.matmul": ("[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                      "affine_map<(d0, d1, d2) -> (d0, d1)>]", ["parallel", "parallel", "reduction"]),
    "linalg.batch_matmul": ("[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
                            "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
                            ["parallel", "parallel", "parallel", "reduction"]),
}


def _whole_buffer(value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True
    owner = owner.operation if hasattr(owner, "operation") else owner
    t = ir.MemRefType(value.type)
    return owner.name in ("memref.alloc", "memref.get_global") and "strided" not in str(t) \
        and "affine_map" not in str(t)


def _maps_and_iterators(op):
    if op.name == "linalg.generic":
        maps = op.attributes["indexing_maps"]
        iterators = ["reduction" if "reduction" in str(a) else "parallel"
                     for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    else:
        text, iterators = _NAMED_MAPS[op.name]
        maps = op.attributes["indexing_maps"] if "indexing_maps" in op.attributes \
            else ir.Attribute.parse(text)
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(maps)], iterators


def _dims(amap):
    """The map's results as loop dimension positions, or None if any is not a bare dim."""
    out = []
    for e in amap.results:
        if not isinstance(e.maybe_downcast(), ir.AffineDimExpr):
            return None
        out.append(ir.AffineDimExpr(e).position)
    return out if len(set(out)) == len(out) else None


def _multiply_add(op, elem) -> bool:
    """Whether the body is out + a * b (each operand perhaps extended to `elem` first)."""
    if not op.regions or not op.regions[0].blocks:
        return False
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    if len(args) != 3:
        return False
    role = {args[0]: "a", args[1]: "b", args[2]: "c"}
    ops = [o.operation for o in block.operations]
    for o in ops[:-1]:
        kinds = sorted(role.get(v, "?") for v in o.operands)
        if o.name == "arith.extf" and kinds in (["a"], ["b"]) and o.result.type == elem:
            role[o.result] = kinds[0]
        elif o.name == "arith.mulf" and kinds == ["a", "b"]:
            role[o.result] = "p"
        elif o.name == "arith.addf" and kinds == ["c", "p"]:
            role[o.result] = "s"
        else:
            return False
    return ops[-1].name == "linalg.yield" and [role.get(v) for v in ops[-1].operands] == ["s"]


def _contraction(op):
    """(m, n, k, batch dims, dims of A, B, C, extents) of a float contraction, or None."""
    maps, iterators = _maps_and_iterators(op)
    operands = list(op.operands)
    if len(operands) != 3 or len(maps) != 3:
        return None
    if not all(isinstance(v.type, ir.MemRefType) and _whole_buffer(v) for v in operands):
        return None
    elem = ir.MemRefType(operands[2].type).element_type
    if not isinstance(elem, (ir.F32Type, ir.F64Type)):
        return None
    for v in operands[:2]:
        t = ir.MemRefType(v.type).element_type
        if t != elem and not (op.name == "linalg.generic" and isinstance(t, (ir.F16Type, ir.BF16Type))):
            return None
    if not _multiply_add(op, elem):
        return None
    dims = [_dims(m) for m in maps]
    if None in dims:
        return None
    da, db, dc = dims
    reductions = [i for i, it in enumerate(iterators) if it == "reduction"]
    parallel = [i for i, it in enumerate(iterators) if it == "parallel"]
    if len(reductions) != 1 or sorted(dc) != parallel or len(dc) < 2:
        return None
    k, n, m = reductions[0], dc[-1], dc[-2]
    if k not in da or k not in db or n in da or n not in db or m not in da or m in db:
        return None
    extents = [0] * len(iterators)
    for value, ds in zip(operands, dims):
        for size, d in zip(ir.MemRefType(value.type).shape, ds):
            extents[d] = size
    batch = [d for d in dc[:-2]]
    return m, n, k, batch, da, db, dc, extents


class _Text:
    """Lines of a kernel body, with its index constants collected to the front."""

    def __init__(self):
        self.lines: list[str] = []
        self.consts: dict[int, str] = {}
        self.n = 0

    def const(self, v: int) -> str:
        if v not in self.consts:
            self.consts[v] = f"%k{v}"
        return self.consts[v]

    def tmp(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def op(self, text: str) -> str:
        name = self.tmp()
        self.lines.append(f"{name} = {text}")
        return name

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def body(self) -> str:
        consts = [f"{n} = arith.constant {v} : index" for v, n in sorted(self.consts.items())]
        return "\n".join(consts + self.lines)


def _kernel(types, elems, found, tm: int, tn: int) -> str:
    (ta, tb, tc), (ea, eb, elem) = types, elems
    m, n, k, batch, da, db, dc, extents = found
    bm, bn = THREADS * tm, THREADS * tn
    M, N, K = extents[m], extents[n], extents[k]
    nbatch = math.prod(extents[d] for d in batch)
    t = _Text()
    idx = {}
    # Batch indices: the grid's z, delinearised in C's order.
    stride = 1
    for d in reversed(batch):
        q = t.op(f"arith.divui %bz, {t.const(stride)} : index") if stride != 1 else "%bz"
        idx[d] = t.op(f"arith.remui {q}, {t.const(extents[d])} : index")
        stride *= extents[d]
    m0 = t.op(f"arith.muli %by, {t.const(bm)} : index")
    n0 = t.op(f"arith.muli %bx, {t.const(bn)} : index")
    zero = t.op(f"arith.constant 0.0 : {elem}")
    acc_types = ", ".join([str(elem)] * (tm * tn))

    def access(value_dims, local):
        return ", ".join(local[d] if d in local else idx[d] for d in value_dims)

    def load_tile(name, ttype, e, ds, other, o0, count, extent_o, smem):
        # 16 x (16 count) elements: a warp reads along the operand's contiguous dimension.
        k_inner = ds[-1] == k
        for i in range(count):
            lane_o, lane_k = ("%ty", "%tx") if k_inner else ("%tx", "%ty")
            o_local = t.op(f"arith.addi {lane_o}, {t.const(16 * i)} : index") if i else lane_o
            o_glob = t.op(f"arith.addi {o0}, {o_local} : index")
            k_glob = t.op(f"arith.addi %kbase, {lane_k} : index")
            ok_o = t.op(f"arith.cmpi ult, {o_glob}, {t.const(extent_o)} : index")
            ok_k = t.op(f"arith.cmpi ult, {k_glob}, {t.const(K)} : index")
            ok = t.op(f"arith.andi {ok_o}, {ok_k} : i1")
            v = t.tmp()
            t.emit(f"{v} = scf.if {ok} -> ({elem}) {{")
            loaded = t.op(f"memref.load {name}[{access(ds, {other: o_glob, k: k_glob})}] : {ttype}")
            if e != elem:
                loaded = t.op(f"arith.extf {loaded} : {e} to {elem}")
            t.emit(f"scf.yield {loaded} : {elem}")
            t.emit(f"}} else {{\nscf.yield {zero} : {elem}\n}}")
            t.emit(f"memref.store {v}, {smem}[{lane_k}, {o_local}] : memref<{TILE_K}x{16 * count}x{elem}, {_WG}>")

    rows = [t.op(f"arith.addi %ty, {t.const(16 * i)} : index") if i else "%ty" for i in range(tm)]
    cols = [t.op(f"arith.addi %tx, {t.const(16 * j)} : index") if j else "%tx" for j in range(tn)]
    inits = ", ".join(f"%s{i} = {zero}" for i in range(tm * tn))
    t.emit(f"%acc:{tm * tn} = scf.for %step = {t.const(0)} to {t.const(-(-K // TILE_K))} "
           f"step {t.const(1)} iter_args({inits}) -> ({acc_types}) {{")
    t.emit(f"%kbase = arith.muli %step, {t.const(TILE_K)} : index")
    load_tile("%A", ta, ea, da, m, m0, tm, M, "%As")
    load_tile("%B", tb, eb, db, n, n0, tn, N, "%Bs")
    t.emit("gpu.barrier")
    inner = ", ".join(f"%r{i} = %s{i}" for i in range(tm * tn))
    t.emit(f"%next:{tm * tn} = scf.for %kk = {t.const(0)} to {t.const(TILE_K)} step {t.const(1)} "
           f"iter_args({inner}) -> ({acc_types}) {{")
    xs = [t.op(f"memref.load %As[%kk, {r}] : memref<{TILE_K}x{bm}x{elem}, {_WG}>") for r in rows]
    ys = [t.op(f"memref.load %Bs[%kk, {c}] : memref<{TILE_K}x{bn}x{elem}, {_WG}>") for c in cols]
    sums = []
    for i in range(tm):
        for j in range(tn):
            p = t.op(f"arith.mulf {xs[i]}, {ys[j]} : {elem}")
            sums.append(t.op(f"arith.addf %r{i * tn + j}, {p} : {elem}"))
    t.emit(f"scf.yield {', '.join(sums)} : {acc_types}\n}}")
    t.emit("gpu.barrier")
    t.emit(f"scf.yield {', '.join(f'%next#{i}' for i in range(tm * tn))} : {acc_types}\n}}")
    for i in range(tm):
        row = t.op(f"arith.addi {m0}, {rows[i]} : index")
        row_ok = t.op(f"arith.cmpi ult, {row}, {t.const(M)} : index")
        for j in range(tn):
            col = t.op(f"arith.addi {n0}, {cols[j]} : index")
            col_ok = t.op(f"arith.cmpi ult, {col}, {t.const(N)} : index")
            ok = t.op(f"arith.andi {row_ok}, {col_ok} : i1")
            where = access(dc, {m: row, n: col})
            t.emit(f"scf.if {ok} {{")
            c = t.op(f"memref.load %C[{where}] : {tc}")
            s = t.op(f"arith.addf {c}, %acc#{i * tn + j} : {elem}")
            t.emit(f"memref.store {s}, %C[{where}] : {tc}\n}}")
    return f"""
func.func @tile(%A: {ta}, %B: {tb}, %C: {tc}) {{
  %one = arith.constant 1 : index
  %gx = arith.constant {-(-N // bn)} : index
  %gy = arith.constant {-(-M // bm)} : index
  %gz = arith.constant {nbatch} : index
  %threads = arith.constant {THREADS} : index
  gpu.launch blocks(%bx, %by, %bz) in (%sgx = %gx, %sgy = %gy, %sgz = %gz)
             threads(%tx, %ty, %tz) in (%stx = %threads, %sty = %threads, %stz = %one)
             workgroup(%As : memref<{TILE_K}x{bm}x{elem}, {_WG}>,
                       %Bs : memref<{TILE_K}x{bn}x{elem}, {_WG}>) {{
{t.body()}
    gpu.terminator
  }}
  return
}}
"""


def _per_thread(M: int, N: int, nbatch: int) -> int:
    """8 x 8 outputs per thread when 128 x 128 tiles still give a wave of blocks, else 4 x 4."""
    return 8 if -(-M // 128) * -(-N // 128) * nbatch >= WAVE_BLOCKS else 4


def _tile(op) -> None:
    found = _contraction(op)
    if found is None:
        return
    a, b, c = list(op.operands)
    types = [ir.MemRefType(v.type) for v in (a, b, c)]
    m, n, k, batch, _, _, _, extents = found
    nbatch = math.prod(extents[d] for d in batch)
    M, N = extents[m], extents[n]
    per = _per_thread(M, N, nbatch)
    if 0 in (M, N, extents[k], nbatch) or -(-M // (16 * per)) > 65535 or nbatch > 65535:
        return  # grid y and z are limited to 65535 blocks
    text = _kernel(types, [t.element_type for t in types], found, per, per)
    template = ir.Module.parse(text)
    func = list(template.body.operations)[0].operation
    body = func.regions[0].blocks[0]
    mapping = {}
    with ir.InsertionPoint(op):
        clones = irutil.clone_ops(list(body.operations)[:-1], mapping)  # all but func.return
    launch = next(c for c in clones if c.name == "gpu.launch")
    # The kernel body still names the template's arguments: point it at the real buffers.
    for arg, real in zip(body.arguments, (a, b, c)):
        for use in list(arg.uses):
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if loops.is_inside(owner, launch):
                owner.operands[use.operand_number] = real
    op.erase()


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in list(loops.entry_body(func).operations):
            if op.operation.name in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic"):
                _tile(op.operation)


PASS = PythonPass(
    argument="mlxc-gpu-tile-matmul",
    summary="Rewrite float contractions (matmuls, dot_generals of any layout) as gpu.launch "
            "kernels tiled through shared memory and registers",
    run=run,
)
