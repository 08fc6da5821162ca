"""mlxc-keep-small-float-roundings: bf16/f16/fp8 arithmetic rounds after every op.

`arith-emulate-unsupported-floats` computes each bf16/f16/fp8 op in f32 between an
extf and a truncf, and `math-extend-to-supported-types` does the same for math ops,
so each result is rounded to its type, as XLA rounds it. Both mark those casts
`fastmath<contract>`, which lets arith's folder turn extf(truncf(x)) into x: the
canonicalization in the llvm stage then drops the rounding between two ops, and a
chain such as logaddexp computes in f32 throughout (cumlogsumexp on f16 came out 4
f16 steps from XLA's). We drop the flag from casts to and from floats of 16 bits
or fewer, so every rounding stays; runs right after the emulation.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _is_small_float(t: ir.Type) -> bool:
    element = irutil.element_type(t)
    return isinstance(element, ir.FloatType) and ir.FloatType(element).width <= 16


def run(module) -> None:
    for op in irutil.walk(module):
        if op.name == "arith.truncf":
            narrow = op.result.type
        elif op.name == "arith.extf":
            narrow = op.operands[0].type
        else:
            continue
        if "fastmath" in op.attributes and _is_small_float(narrow):
            del op.attributes["fastmath"]


PASS = PythonPass(
    argument="mlxc-keep-small-float-roundings",
    summary="Drop `contract` from bf16/f16/fp8 extf/truncf so the per-op roundings are not "
            "folded away",
    run=run,
)
