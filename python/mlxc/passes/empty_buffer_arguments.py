"""mlxc-empty-buffer-arguments: zero-size buffer arguments become memref<0xT>.

`convert-func-to-llvm{use-bare-ptr-memref-call-conv}` refuses a static memref such as
memref<2x0x3xf32> (its identity strides are not what it expects), leaves the function
unconverted, and the module never reaches the LLVM dialect. Such a buffer holds no
element, so nothing reads or writes through its pointer: we give the function a
memref<0xT> argument in its place and let the body use a zero-byte `memref.alloca` of
the original type.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _needs_rewrite(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType):
        return False
    m = ir.MemRefType(t)
    identity = (isinstance(m.layout, ir.AffineMapAttr)
                and m.layout.value == ir.AffineMap.get_identity(m.rank))
    return m.has_static_shape and 0 in m.shape and list(m.shape) != [0] and identity


def _rewrite(func) -> None:
    ftype = irutil.function_type(func)
    inputs = list(ftype.inputs)
    block = func.regions[0].blocks[0]
    first = block.operations[0]  # stand-ins go before it, in argument order
    changed = False
    for i, t in enumerate(inputs):
        if not _needs_rewrite(t):
            continue
        m = ir.MemRefType(t)
        arg = block.arguments[i]
        with ir.InsertionPoint(first), func.location:
            stand_in = ir.Operation.create("memref.alloca", results=[m], operands=[],
                                           attributes={"operandSegmentSizes":
                                                       ir.DenseI32ArrayAttr.get([0, 0])}).result
        arg.replace_all_uses_with(stand_in)
        flat = ir.MemRefType.get([0], m.element_type, memory_space=m.memory_space)
        arg.set_type(flat)
        inputs[i] = flat
        changed = True
    if changed:
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, list(ftype.results)))


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name == "func.func" and func.regions[0].blocks:
            _rewrite(func)


PASS = PythonPass(
    argument="mlxc-empty-buffer-arguments",
    summary="Zero-size memref arguments become memref<0xT> (bare-pointer calls accept them)",
    run=run,
)
