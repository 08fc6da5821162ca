"""The contract that ends each stage: what the IR may contain once the stage is done.

A contract failure names the first offending op, where it is, and what mlxc expected,
instead of letting a later pass fail obscurely (or the JIT crash) on leftover ops.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from .. import irutil
from .._mlir import ir
from ..errors import CompileError, DynamicShapeError

STAGE_ATTR = "mlxc.stage"


def _dialect(op) -> str:
    return op.name.split(".", 1)[0]


def _fail(op, message: str, offenders: list, error=CompileError) -> None:
    kinds = Counter(o.name for o in offenders)
    note = None
    if len(offenders) > 1:
        note = "all offending ops: " + ", ".join(f"{n} (x{c})" for n, c in kinds.most_common())
    raise error.at(op, message, note)


def _ops(module) -> list:
    return irutil.walk(module)[1:]


def _is_dynamic(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return not ir.RankedTensorType(t).has_static_shape
    return isinstance(t, ir.UnrankedTensorType)


def stablehlo_only(module, stage: str) -> None:
    ops = _ops(module)
    bad = [o for o in ops if _dialect(o) not in ("func", "stablehlo", "builtin")]
    if bad:
        op = bad[0]
        if _dialect(op) == "vhlo":
            _fail(op, f"after stage '{stage}': VHLO op '{op.name}' was not upgraded to StableHLO; "
                      "the artifact may come from a newer StableHLO than mlxc's", bad)
        if _dialect(op) == "chlo":
            _fail(op, f"after stage '{stage}': CHLO op '{op.name}' has no StableHLO "
                      "decomposition in mlxc; export the program with jax.export (which writes "
                      "stablehlo.composite ops with their decompositions) instead of "
                      "jax.jit(f).lower(...).as_text()", bad)
        _fail(op, f"after stage '{stage}': '{op.name}' is not a StableHLO op; mlxc takes "
                  "StableHLO programs (func, stablehlo ops)", bad)
    composites = [o for o in ops if o.name == "stablehlo.composite"]
    if composites:
        _fail(composites[0], f"after stage '{stage}': stablehlo.composite was not expanded", composites)
    dynamic = [o for o in ops if any(_is_dynamic(r.type) for r in o.results)]
    if dynamic:
        _fail(dynamic[0], f"after stage '{stage}': op '{dynamic[0].name}' has a dynamic shape "
                          f"({dynamic[0].results[0].type}) that shape refinement could not resolve",
              dynamic, DynamicShapeError)


def _outermost(ops: list) -> list:
    """Drop ops nested inside another op of `ops` (a reduce's body, say)."""
    chosen = set()
    out = []
    for o in ops:  # pre-order: parents come first
        parent = o.parent
        if parent is not None and parent in chosen:
            chosen.add(o)
            continue
        chosen.add(o)
        out.append(o)
    return out


def no_stablehlo(module, stage: str) -> None:
    bad = _outermost([o for o in _ops(module) if _dialect(o) in ("stablehlo", "chlo", "vhlo")])
    if bad:
        op = bad[0]
        _fail(op, f"mlxc cannot lower '{op.name}' yet: no lowering to linalg for it "
                  f"(left after stage '{stage}')", bad)


def _tensor_values(op):
    for r in op.results:
        if irutil.is_tensor(r.type):
            return r.type
    for region in op.regions:
        for block in region.blocks:
            for a in block.arguments:
                if irutil.is_tensor(a.type):
                    return a.type
    return None


def no_tensors(module, stage: str) -> None:
    no_stablehlo(module, stage)
    bad = [o for o in _ops(module) if _tensor_values(o) is not None]
    if bad:
        op = bad[0]
        _fail(op, f"after stage '{stage}': '{op.name}' still has a value of tensor type "
                  f"{_tensor_values(op)}; bufferization left it behind", bad)
    entry = irutil.string_attr(module, "mlxc.entry")
    func = irutil.find_function(module, entry) if entry else None
    if func is not None and func.name == "func.func" and irutil.function_type(func).results:
        raise CompileError.at(func, f"after stage '{stage}': entry @{entry} still returns values; "
                                    "its results should have become output buffers")


def no_linalg(module, stage: str) -> None:
    no_tensors(module, stage)
    bad = [o for o in _ops(module) if _dialect(o) in ("linalg", "bufferization", "tensor")]
    if bad:
        _fail(bad[0], f"after stage '{stage}': '{bad[0].name}' was not lowered to loops", bad)


def llvm_only(module, stage: str) -> None:
    bad = [o for o in _ops(module) if _dialect(o) != "llvm"]
    if bad:
        op = bad[0]
        _fail(op, f"after stage '{stage}': '{op.name}' was not lowered to the LLVM dialect", bad)


CONTRACTS: dict[str, Callable] = {
    "import": stablehlo_only,
    "simplify": stablehlo_only,
    "linalg": no_stablehlo,
    "fuse": no_stablehlo,
    "bufferize": no_tensors,
    "lower": no_linalg,
    "llvm": llvm_only,
}


def check(module, stage: str) -> None:
    try:
        contract = CONTRACTS[stage]
    except KeyError:
        raise ValueError(f"no contract for stage '{stage}'; known: {', '.join(CONTRACTS)}") from None
    contract(module, stage)
