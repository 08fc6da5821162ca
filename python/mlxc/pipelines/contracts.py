"""The contract that ends each stage: what the IR may contain once the stage is done.

A contract failure names the first offending op, where it is, and what mlxc expected,
instead of letting a later pass fail obscurely (or the JIT crash) on leftover ops.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Callable, Optional

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


class _Scan:
    """The ops below the module, pre-order, with their names: one walk per contract.

    Walking from Python costs about a microsecond an op, and a contract asks several
    questions (dialects, tensors, composites); they share this one walk and look at
    names (plain strings) first, touching an op's types only where they must. The walk
    only collects the ops (irutil.walk), and the names are read afterwards in one
    comprehension. A contract on names alone (`ops=False`: no StableHLO left, only
    the LLVM dialect) collects only the set of names, and the ops only when it fails:
    on a training step's LLVM dialect that is 44 ms instead of 67.
    """

    def __init__(self, module, ops: bool = True):
        self._module = module
        self._ops: Optional[list] = None
        self._names: Optional[list] = None
        self._kinds: Optional[frozenset] = None
        self.types: Optional[set] = None  # every value's type, when a check read them all
        if ops:
            self._collect()

    def _collect(self) -> None:
        self._ops = irutil.walk(self._module)[1:]
        self._names = [op.name for op in self._ops]
        self._kinds = frozenset(self._names)  # a few dozen names for thousands of ops

    @property
    def ops(self) -> list:
        if self._ops is None:
            self._collect()
        return self._ops

    @property
    def names(self) -> list:
        if self._names is None:
            self._collect()
        return self._names

    @property
    def kinds(self) -> frozenset:
        if self._kinds is None:
            self._kinds = irutil.op_names(self._module, itself=False)
        return self._kinds

    def where(self, keep: Callable[[str], bool]) -> list:
        """The ops whose name satisfies `keep` (asked once per distinct name)."""
        hits = {n for n in self.kinds if keep(n)}
        if not hits:
            return []
        return [op for op, name in zip(self.ops, self.names) if name in hits]


def _is_dynamic(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return not ir.RankedTensorType(t).has_static_shape
    return isinstance(t, ir.UnrankedTensorType)


def _dynamic_result(op) -> bool:
    for t in op.results.types:
        if _is_dynamic(t):
            return True
    return False


def _value_types(scan: _Scan, skip: frozenset = frozenset()) -> set:
    """The type of every value in the scanned ops (results, block arguments), uniqued;
    results of ops named in `skip` left out.

    Reading types is most of a contract's cost: `op.result.type` costs half of
    `op.results.types`, and the types go to a list uniqued at the end (a few dozen
    for thousands of values), so each is tested once, not once per value."""
    found: list = []
    collect, extend = found.append, found.extend
    for op, name in zip(scan.ops, scan.names):
        if name not in skip:
            count = len(op.results)
            if count == 1:
                collect(op.result.type)
            elif count:
                extend(op.results.types)
        if len(op.regions):
            for region in op.regions:
                for block in region.blocks:
                    extend(block.arguments.types)
    return set(found)


_MAX_BYTES = 2**63 - 1  # what an int64 offset, size or stride can address


def _byte_size(t: ir.Type) -> int:
    """A static tensor's size in bytes (exact: Python integers), else 0."""
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return 0
    rt = ir.RankedTensorType(t)
    element = rt.element_type
    if isinstance(element, ir.ComplexType):
        bits = 2 * _element_bits(ir.ComplexType(element).element_type)
    else:
        bits = _element_bits(element)
    count = 1
    for n in rt.shape:
        count *= n
    return count * max(1, (bits + 7) // 8)


def _element_bits(element) -> int:
    if isinstance(element, (ir.IntegerType, ir.FloatType)):
        return element.width
    return 64  # index, quantized storage at most: a bound is all this needs


def _check_byte_sizes(scan: _Scan, types: set, stage: str) -> None:
    """A tensor of more bytes than int64 addresses (tensor<100000000000x100000000000xf32>)
    is refused by name, before any size computation wraps around."""
    huge = {t for t in types if _byte_size(t) > _MAX_BYTES}
    if not huge:
        return
    offenders = []
    for op in scan.ops:
        if any(t in huge for t in op.results.types) or any(
                t in huge for region in op.regions for block in region.blocks
                for t in block.arguments.types):
            offenders.append(op)
    t = next(iter(huge))
    op = offenders[0] if offenders else scan.ops[0]
    _fail(op, f"after stage '{stage}': {t} holds {_byte_size(t):,} bytes, more than a 64-bit "
              f"size can address ({_MAX_BYTES:,})", offenders)


def stablehlo_only(module, stage: str, scan: Optional[_Scan] = None) -> None:
    scan = scan or _Scan(module)
    ops = scan.ops
    bad = scan.where(lambda n: not n.startswith(("func.", "stablehlo.", "builtin.")))
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
    composites = scan.where(lambda n: n == "stablehlo.composite")
    if composites:
        _fail(composites[0], f"after stage '{stage}': stablehlo.composite was not expanded", composites)
    types = _value_types(scan)
    _check_byte_sizes(scan, types, stage)
    if not any(_is_dynamic(t) for t in types):
        return
    dynamic = [o for o in ops if _dynamic_result(o)]
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


def no_stablehlo(module, stage: str, scan: Optional[_Scan] = None) -> None:
    scan = scan or _Scan(module, ops=False)
    bad = _outermost(scan.where(lambda n: n.startswith(("stablehlo.", "chlo.", "vhlo."))))
    if bad:
        op = bad[0]
        _fail(op, f"mlxc cannot lower '{op.name}' yet: no lowering to linalg for it "
                  f"(left after stage '{stage}')", bad)


_TENSOR_TYPES = (ir.RankedTensorType, ir.UnrankedTensorType)


def _tensor_values(op):
    """The first tensor type among `op`'s results and block arguments, or None (what a
    failed `no_tensors` reports, op by op)."""
    for t in op.results.types:
        if isinstance(t, _TENSOR_TYPES):
            return t
    for region in op.regions:
        for block in region.blocks:
            for t in block.arguments.types:
                if isinstance(t, _TENSOR_TYPES):
                    return t
    return None


def _element_type_names(types) -> frozenset:
    """The names of the scalar types in `types` (shaped and complex types unwrapped)."""
    names = set()
    for t in types:
        while isinstance(t, (ir.ShapedType, ir.ComplexType)):
            t = t.element_type
        names.add(str(t))
    return frozenset(names)


# Ops that cannot produce a tensor (LLVM types, memrefs, vectors, scalars), whose
# results the `lower` contract need not read: two thirds of that stage's ops. Their
# element types are then unknown, so that check reports none (the `llvm` stage's
# conditions are on ops only).
_NO_TENSOR_RESULTS = frozenset(
    ["memref." + n for n in (
        "alloc", "alloca", "assume_alignment", "cast", "collapse_shape", "dealloc", "dim",
        "expand_shape", "extract_aligned_pointer_as_index", "extract_strided_metadata",
        "get_global", "load", "reinterpret_cast", "store", "subview", "view")]
    + ["vector." + n for n in (
        "bitcast", "broadcast", "constant_mask", "contract", "create_mask", "deinterleave",
        "extract", "extract_strided_slice", "fma", "from_elements", "insert",
        "insert_strided_slice", "interleave", "load", "multi_reduction", "outerproduct",
        "reduction", "shape_cast", "shuffle", "splat", "step", "store", "to_elements",
        "transfer_read")])


# Ops whose results have the type of one of their operands, or that type's element
# type (or a vector of it): each value they make has an element type, and is a tensor
# or not, as a value defined before it, whose type is read (or is again such an op's).
# Reading their results adds nothing to the types a contract sees.
_TYPES_OF_OPERANDS = frozenset(
    ["vector." + n for n in (
        "broadcast", "contract", "deinterleave", "extract", "extract_strided_slice", "fma",
        "from_elements", "insert", "insert_strided_slice", "interleave", "load",
        "multi_reduction", "outerproduct", "reduction", "shape_cast", "shuffle", "splat",
        "to_elements", "transfer_read", "transpose")]
    + ["arith." + n for n in (
        "addf", "addi", "andi", "divf", "divsi", "divui", "maximumf", "maxnumf", "maxsi",
        "maxui", "minimumf", "minnumf", "minsi", "minui", "mulf", "muli", "negf", "ori",
        "remf", "remsi", "remui", "select", "shli", "shrsi", "shrui", "subf", "subi", "xori")]
    + ["math." + n for n in (
        "absf", "ceil", "copysign", "cos", "erf", "exp", "exp2", "expm1", "floor", "fma",
        "log", "log10", "log1p", "log2", "powf", "round", "roundeven", "rsqrt", "sin", "sqrt",
        "tanh", "trunc")])


def no_tensors(module, stage: str, scan: Optional[_Scan] = None, *,
               element_types: bool = True) -> None:
    """No value of tensor type is left, and the entry returns nothing. With
    `element_types`, the scan also records every value's type for the next stage."""
    scan = scan or _Scan(module)
    no_stablehlo(module, stage, scan)
    skip = _TYPES_OF_OPERANDS if element_types else _TYPES_OF_OPERANDS.union(
        _NO_TENSOR_RESULTS, (n for n in scan.kinds if n.startswith("llvm.")))
    types = _value_types(scan, skip)
    if any(isinstance(t, _TENSOR_TYPES) for t in types):
        bad = [o for o in scan.ops if _tensor_values(o) is not None]
        if bad:
            op = bad[0]
            _fail(op, f"after stage '{stage}': '{op.name}' still has a value of tensor type "
                      f"{_tensor_values(op)}; bufferization left it behind", bad)
    scan.types = types if element_types else None
    entry = irutil.string_attr(module, "mlxc.entry")
    func = irutil.find_function(module, entry) if entry else None
    if func is not None and func.name == "func.func" and irutil.function_type(func).results:
        raise CompileError.at(func, f"after stage '{stage}': entry @{entry} still returns values; "
                                    "its results should have become output buffers")


def no_linalg(module, stage: str, scan: Optional[_Scan] = None) -> None:
    scan = scan or _Scan(module)
    no_tensors(module, stage, scan, element_types=False)
    bad = scan.where(lambda n: n.startswith(("linalg.", "bufferization.", "tensor.")))
    if bad:
        _fail(bad[0], f"after stage '{stage}': '{bad[0].name}' was not lowered to loops", bad)


def llvm_only(module, stage: str, scan: Optional[_Scan] = None) -> None:
    scan = scan or _Scan(module, ops=False)
    # omp: parallel regions, which LLVM's OpenMP IR builder outlines at translation.
    bad = scan.where(lambda n: not n.startswith(("llvm.", "omp.")))
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


# The contracts above take the shared scan as a third argument; a target may add
# contracts of its own to CONTRACTS that take (module, stage) only.
_SCANNING = frozenset(CONTRACTS.values())
# The contracts that look at op names alone (until they fail).
_ON_NAMES = frozenset({no_stablehlo, llvm_only})

# What the last successful check on this thread saw: the runner takes it to choose the
# next stage's conditional passes without walking the module again.
_seen = threading.local()


def take_seen() -> Optional[tuple]:
    """(op names, element type names or None) of the module the last check on this
    thread passed, then forgotten; None if there is none."""
    seen = getattr(_seen, "seen", None)
    _seen.seen = None
    return seen


def check(module, stage: str) -> None:
    try:
        contract = CONTRACTS[stage]
    except KeyError:
        raise ValueError(f"no contract for stage '{stage}'; known: {', '.join(CONTRACTS)}") from None
    _seen.seen = None
    if contract not in _SCANNING:  # a target's own contract(module, stage)
        contract(module, stage)
        return
    scan = _Scan(module, ops=contract not in _ON_NAMES)
    contract(module, stage, scan)
    types = _element_type_names(scan.types) if scan.types is not None else None
    _seen.seen = (scan.kinds, types)
