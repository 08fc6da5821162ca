"""A program written directly as StableHLO text (the `hlo` family), for the ops and
edge cases JAX never emits as such: unsigned arithmetic, shifts by the bit width,
integer division by zero, every compare type, converts and bitcasts between all
types, control flow whose results are reused. Judged by the StableHLO interpreter."""

from __future__ import annotations

from .ops import load_all
from .program import Program

_ELEMENT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
            "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
            "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
            "complex64": "complex<f32>", "complex128": "complex<f64>",
            "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2"}


def tensor_type(v) -> str:
    return "tensor<" + "".join(f"{d}x" for d in v.shape) + _ELEMENT[v.dtype] + ">"


def render(p: Program) -> str:
    table = load_all()
    types = [tensor_type(v) for v in p.inputs] + [tensor_type(s.out) for s in p.steps]
    n = len(p.inputs)
    args = ", ".join(f"%v{i}: {types[i]}" for i in range(n))
    outs = ", ".join(types[o] for o in p.outputs)
    lines = [f"func.func @main({args}) -> ({outs}) {{"]
    for k, s in enumerate(p.steps):
        writer = table[s.op].hlo
        if writer is None:
            raise ValueError(f"op {s.op} has no StableHLO text form")
        body = writer(s.params, [f"%v{a}" for a in s.args], [types[a] for a in s.args], types[n + k])
        body = [line.replace("%TMP", f"%t{k}_") for line in body]
        lines += [f"  {line}" for line in body[:-1]] + [f"  %v{n + k} = {body[-1]}"]
    lines.append(f"  return {', '.join(f'%v{o}' for o in p.outputs)} : {outs}")
    lines.append("}")
    return "\n".join(lines) + "\n"
