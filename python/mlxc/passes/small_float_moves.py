"""mlxc-small-float-moves: bf16/f16 values that are only moved move as i16.

LLVM's x86 backend soft-promotes bf16 (and f16 without AVX512-FP16) vectors and
cannot legalize some of the ops that only move them ("Do not know how to soft
promote this operator's operand!", which aborts the process): a load or store of a
vector<9xbf16> (`jnp.take` of a row of 9, fuzz case gather/13625), the element
extracts and inserts of a 9-wide transpose. Arithmetic on these types already runs in
f32 (arith-emulate-unsupported-floats); what is left are loads, stores, element and
aggregate moves, shuffles, selects and poison values, and those are the same ops on
the bit patterns. So every such op is rebuilt on i16 types, with a bitcast where a
value comes from, or goes to, anything else (LLVM folds the casts). Runs on the LLVM
dialect, where pointers are opaque: only value types change.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

MOVES = frozenset({"llvm.load", "llvm.store", "llvm.extractelement", "llvm.insertelement",
                   "llvm.shufflevector", "llvm.extractvalue", "llvm.insertvalue",
                   "llvm.mlir.poison", "llvm.mlir.undef", "llvm.select"})


class _SmallTypes(dict):
    """Whether a type holds bf16 or f16, printed once per type: printing costs
    microseconds, and a program has few distinct types but thousands of loads."""

    def __missing__(self, t) -> bool:
        text = str(t)
        small = self[t] = "bf16" in text or "f16" in text
        return small


def _as_bits(t):
    return ir.Type.parse(str(t).replace("bf16", "i16").replace("f16", "i16"))


def _castable(t) -> bool:
    """A scalar or vector (llvm.bitcast takes it), not an aggregate."""
    return not str(t).startswith("!llvm.")


def _attributes(op) -> dict:
    names = [a if isinstance(a, str) else a.name for a in op.attributes]
    return {n: op.attributes[n] for n in names}


def _convertible(ops: list, small: _SmallTypes) -> list:
    """The ops of `ops` to rebuild: aggregates (arrays of vectors) cannot be bitcast,
    so an op whose aggregate comes from, or goes to, an op left alone stays too."""
    chosen = {op.operation for op in ops}

    def inside(op) -> bool:
        return hasattr(op, "name") and op.operation in chosen

    changed = True
    while changed:
        changed = False
        for op in list(chosen):
            aggregates_in = [v for v in op.operands if small[v.type] and not _castable(v.type)]
            aggregates_out = [r for r in op.results if small[r.type] and not _castable(r.type)]
            if any(not inside(v.owner) for v in aggregates_in) or any(
                    not inside(u.owner) for r in aggregates_out for u in r.uses):
                chosen.discard(op)
                changed = True
    return [op for op in ops if op.operation in chosen]


def run(module) -> None:
    small = _SmallTypes()
    candidates = [op for op in irutil.ops_named(module, *MOVES)
                  if any(small[v.type] for v in list(op.operands) + list(op.results))]
    if not candidates:
        return
    ops = _convertible(candidates, small)
    back_casts: dict = {}  # a bf16 value made by a cast back -> the i16 value it casts

    def bits_of(value):
        if value in back_casts:
            return back_casts[value]
        if not small[value.type]:
            return value
        return ir.Operation.create("llvm.bitcast", results=[_as_bits(value.type)],
                                   operands=[value]).result

    for op in ops:
        with ir.InsertionPoint(op), op.location:
            operands = [bits_of(v) for v in op.operands]
            new = ir.Operation.create(op.name, results=[_as_bits(r.type) for r in op.results],
                                      operands=operands, attributes=_attributes(op))
        for old, value in zip(op.results, new.results):
            if not small[old.type]:
                old.replace_all_uses_with(value)
                continue
            if _castable(old.type):
                with ir.InsertionPoint(op), op.location:
                    cast = ir.Operation.create("llvm.bitcast", results=[old.type],
                                               operands=[value]).result
                back_casts[cast] = value
                old.replace_all_uses_with(cast)
            else:
                old.replace_all_uses_with(value)  # every user is rebuilt too
    for op in reversed(ops):
        op.erase()
    for cast in back_casts:
        if not list(cast.uses):
            cast.owner.erase()


PASS = PythonPass(
    argument="mlxc-small-float-moves",
    summary="bf16/f16 loads, stores, element and aggregate moves, shuffles and selects on "
            "i16 bit patterns (LLVM's x86 backend aborts on some bf16 vector moves)",
    run=run,
)
