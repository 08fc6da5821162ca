"""mlxc-upcast-low-precision-dots: accumulate bf16/f16/fp8 contractions in f32, as XLA does.

`stablehlo-legalize-to-linalg` turns a bf16 dot into a linalg op that accumulates in
bf16, which loses most of the sum's precision; XLA accumulates in f32 and rounds
once. We convert the operands of bf16/f16 (and fp8/fp6/fp4) `dot_general`, `dot` and
`convolution` ops to f32, contract in f32, and convert the result back.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_CONTRACTIONS = ("stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution")
# With the fp8/fp6/fp4 types, whose per-step rounding lost a unit in the last place
# against XLA on a product of three terms.
_LOW = ("bf16", "f16", "f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FNUZ", "f8E5M2FNUZ",
        "f8E4M3B11FNUZ", "f8E8M0FNU", "f6E2M3FN", "f6E3M2FN", "f4E2M1FN")


def _with_element(t: ir.Type, element: ir.Type) -> ir.Type:
    rt = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(rt.shape, element, rt.encoding)


def _upcast(op) -> None:
    f32 = ir.F32Type.get()
    loc = op.location
    with ir.InsertionPoint(op), loc:
        operands = []
        for v in op.operands:
            if str(ir.RankedTensorType(v.type).element_type) in _LOW:
                v = ir.Operation.create("stablehlo.convert", results=[_with_element(v.type, f32)],
                                        operands=[v]).result
            operands.append(v)
        attrs = {n: op.attributes[n] for n in op.attributes if n != "algorithm"}
        wide = ir.Operation.create(op.name, results=[_with_element(op.result.type, f32)],
                                   operands=operands, attributes=attrs)
        back = ir.Operation.create("stablehlo.convert", results=[op.result.type],
                                   operands=[wide.result])
    op.result.replace_all_uses_with(back.result)
    op.erase()


def run(module) -> None:
    targets = []
    for op in irutil.walk(module):
        if op.name not in _CONTRACTIONS or len(op.results) != 1:
            continue
        if not isinstance(op.result.type, ir.RankedTensorType):
            continue
        if str(ir.RankedTensorType(op.result.type).element_type) in _LOW:
            targets.append(op)
    for op in targets:
        _upcast(op)


PASS = PythonPass(
    argument="mlxc-upcast-low-precision-dots",
    summary="Compute bf16/f16/fp8 dot_general, dot and convolution in f32 and round the result once",
    run=run,
)
