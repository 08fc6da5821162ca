"""mlxc-library-matmuls: f32 matrix products (on memrefs) as calls to `mlxc_sgemm`.

Which products: targets/cpu/library_calls.py (and why). Each operand goes by its
aligned pointer plus offset and one element stride per loop (0 for a loop it does not
index: a broadcast batch), so transposed and strided operands need no copy. A product
whose output a zero fill writes just before tells the kernel to overwrite instead of
accumulate, and the fill goes: no separate pass over C.
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import ir
from ..targets.cpu import library_calls
from ..targets.cpu.kernel_calls import i32_const, index_const
from . import PythonPass

CALLEE = "mlxc_sgemm"


def _binary(name: str, a, b):
    return ir.Operation.create(name, results=[ir.IndexType.get()], operands=[a, b]).result


def _pointer_and_strides(memref, dims: list[int], loops: list[int]):
    """The address of `memref`'s first element, and its element stride along each of
    `loops` (the loop each memref dimension runs along is dims[i])."""
    index = ir.IndexType.get()
    mtype = ir.MemRefType(memref.type)
    rank = mtype.rank
    base = ir.MemRefType.get([], mtype.element_type, memory_space=mtype.memory_space)
    meta = ir.Operation.create("memref.extract_strided_metadata",
                               results=[base, index] + [index] * (2 * rank), operands=[memref])
    offset = meta.results[1]
    strides = [meta.results[2 + rank + i] for i in range(rank)]
    aligned = ir.Operation.create("memref.extract_aligned_pointer_as_index", results=[index],
                                  operands=[memref]).result
    size = index_const(ir.F32Type.get().width // 8)
    pointer = _binary("arith.addi", aligned, _binary("arith.muli", offset, size))
    zero = None
    out = []
    for loop in loops:
        if loop is not None and loop in dims:
            out.append(strides[dims.index(loop)])
        else:
            if zero is None:
                zero = index_const(0)
            out.append(zero)
    return pointer, out


def _zero_fill_before(op, output):
    """The linalg.fill of +0.0 into `output` right before `op`, if there is one."""
    fill = None
    for o in op.block.operations:
        if o == op:
            break
        fill = o
    if fill is None or fill.name != "linalg.fill" or len(fill.operands) != 2:
        return None
    if fill.operands[1] != output or not irutil.is_zero_constant(fill.operands[0]):
        return None
    const = irutil.defining_op(fill.operands[0])
    attr = const.attributes["value"]
    if not isinstance(attr, ir.FloatAttr) or str(attr).startswith("-"):
        return None  # -0.0: C = -0.0 + A @ B keeps a signed zero that overwriting would not
    return fill


def _declare(module) -> None:
    i32 = ir.IntegerType.get_signless(32)
    irutil.declare_function(module, CALLEE, [ir.IndexType.get()] * 16 + [i32, i32])


def _rewrite(op, info: library_calls.Matmul, threads: int) -> None:
    a, b, c = op.operands
    with ir.InsertionPoint(op), op.location:
        fill = _zero_fill_before(op, c)
        pa, (a_bs, a_rs, a_cs) = _pointer_and_strides(a, info.operand_dims(0),
                                                      [info.batch, info.m, info.k])
        pb, (b_bs, b_rs, b_cs) = _pointer_and_strides(b, info.operand_dims(1),
                                                      [info.batch, info.k, info.n])
        pc, (c_bs, c_rs, c_cs) = _pointer_and_strides(c, info.operand_dims(2),
                                                      [info.batch, info.m, info.n])
        sizes = info.sizes
        batch = sizes[info.batch] if info.batch is not None else 1
        args = [index_const(batch), index_const(sizes[info.m]), index_const(sizes[info.n]),
                index_const(sizes[info.k]), pa, a_bs, a_rs, a_cs, pb, b_bs, b_rs, b_cs,
                pc, c_bs, c_rs, c_cs, i32_const(threads), i32_const(0 if fill else 1)]
        ir.Operation.create("func.call", operands=args,
                            attributes={"callee": ir.FlatSymbolRefAttr.get(CALLEE)})
    op.erase()
    if fill is not None:
        fill.erase()


def run(module) -> None:
    found = []
    for op in irutil.ops_named(module, "linalg.matmul", "linalg.batch_matmul",
                               "linalg.generic"):
        if not all(isinstance(v.type, ir.MemRefType) for v in op.operands):
            continue
        info = library_calls.matmul(op)
        if info is not None:
            found.append((op, info))
    if not found:
        return
    with module.context:
        _declare(module)
        threads = settings.get("threads")
        for op, info in found:
            _rewrite(op, info, threads)


PASS = PythonPass(
    argument="mlxc-library-matmuls",
    summary="f32 matrix products with nothing fused into them call the runtime's packed "
            "kernel (mlxc_sgemm)",
    run=run,
)
