"""mlxc-small-float-fma: f16 a * b + c as one fused multiply-add where the host computes
f16 natively (AVX512-FP16), as XLA's results there are.

On a CPU with AVX512-FP16, XLA's f16 arithmetic runs on f16 registers, and LLVM
contracts a product feeding one sum or difference into a single FMA, one rounding
where the op-by-op emulation rounds twice: `(x - y) * (x + y) - exp(...)` on f16
came out a unit in the last place from XLA's in a fifth of its elements there. On
other CPUs XLA computes f16 in f32 and rounds after each op, which the emulation
matches; this pass then changes nothing. bf16 is never contracted (XLA's is not).
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_SUMS = ("arith.addf", "arith.subf")


def host_computes_f16() -> bool:
    from ..runtime import artifact
    return "avx512_fp16" in artifact.host_cpu()[1]


def _is_f16(t) -> bool:
    element = irutil.element_type(t)
    return isinstance(element, ir.F16Type)


def _single_use_product(value, block):
    op = irutil.defining_op(value)
    if op is None or op.name != "arith.mulf" or op.block != block:
        return None
    return op if len(list(op.results[0].uses)) == 1 else None


def _negate(value):
    return ir.Operation.create("arith.negf", results=[value.type], operands=[value]).result


def run(module, force: str = "false") -> None:
    if force.lower() not in ("1", "true") and not host_computes_f16():
        return
    for op in [o for o in irutil.walk(module) if o.name in _SUMS]:
        if not _is_f16(op.results[0].type):
            continue
        lhs, rhs = op.operands[0], op.operands[1]
        product = _single_use_product(lhs, op.block)
        other, product_first = rhs, True
        if product is None:
            product, other, product_first = _single_use_product(rhs, op.block), lhs, False
        if product is None:
            continue
        a, b = product.operands[0], product.operands[1]
        with op.location, ir.InsertionPoint(op):
            if op.name == "arith.subf":
                if product_first:
                    other = _negate(other)  # a*b - c
                else:
                    a = _negate(a)  # c - a*b
            fma = ir.Operation.create("math.fma", results=[op.results[0].type],
                                      operands=[a, b, other])
        op.results[0].replace_all_uses_with(fma.results[0])
        op.erase()
        product.erase()


PASS = PythonPass(
    argument="mlxc-small-float-fma",
    summary="f16 a * b + c as one fused multiply-add on hosts with AVX512-FP16, as XLA "
            "computes it there",
    run=run,
    options={"force": "contract on any host (default false: only with AVX512-FP16)"},
    defaults={"force": "false"},
)
