"""The fusion groups of a program, as the CPU schedules see them: one per linalg op left
after the fuse stage, with the ops fused into it, why its inputs were not, the schedule
or runtime kernel it got, and a rough cost.

`mlxc-apply-cpu-schedules` hands the groups to `record` just before it tiles them;
`mlxc.fusion_report(source)` compiles to the fuse stage inside `collecting()` (an
ordinary compile records nothing and pays nothing) and formats them, and `unvectorized()` lists the groups that run as
scalar loops: no vectorized schedule and no kernel. The test suite fails when a corpus
program has one (test_fusion_report.py).
"""

from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass, field

from ..._mlir import ir

_collector = threading.local()  # .groups: the list being filled, in `collecting()`
# Rough throughputs of one core, for the cost column only: vectorized arithmetic
# (16 f32 lanes, about one op per cycle at ~3 GHz), scalar arithmetic, memory.
VECTOR_FLOPS, SCALAR_FLOPS, BYTES_PER_S = 48e9, 3e9, 15e9
# With no schedule, the vectorizer still makes one vector of a small op's whole
# iteration space (schedules.MAX_WHOLE_VECTOR): vectorized code too.
SMALL = 4096
_SCALAR_KINDS = ("scalar", "single elements")


@dataclass
class Group:
    index: int
    op: str                      # the linalg op's name
    loops: list[int]             # its iteration space
    iterators: list[str]
    body: list[str]              # the scalar ops fused into it
    schedule: str                # the schedule's description, "kernel ...", or "none"
    vectorized: bool
    bytes: int                   # operands and results
    reasons: list[str] = field(default_factory=list)  # why inputs were not fused
    location: str = ""

    @property
    def flops(self) -> int:
        per = max(1, sum(1 for b in self.body if b.startswith(("arith.", "math."))))
        return math.prod(self.loops) * per

    @property
    def estimated_us(self) -> float:
        rate = VECTOR_FLOPS if self.vectorized else SCALAR_FLOPS
        return max(self.flops / rate, self.bytes / BYTES_PER_S) * 1e6


def _shape(value) -> list[int]:
    t = value.type
    return list(ir.ShapedType(t).shape) if isinstance(t, (ir.RankedTensorType,)) else []


def _nbytes(value) -> int:
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return 0
    rt = ir.RankedTensorType(t)
    width = getattr(rt.element_type, "width", 32) if hasattr(rt.element_type, "width") else 32
    return math.prod(rt.shape) * max(1, width // 8)


def _iterators(op) -> list[str]:
    if "iterator_types" in op.attributes:
        return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    from . import schedules
    return list(schedules._NAMED_ITERATORS.get(op.name, ["parallel"] * len(_shape(op.results[0]))
                                              if len(op.results) else []))


def _loops(op) -> list[int]:
    from . import schedules
    if op.name == "linalg.generic":
        return schedules._generic_ranges(op) or []
    shapes = [_shape(v) for v in op.operands]
    if op.name == "linalg.matmul" and len(shapes) >= 2:
        return [shapes[0][0], shapes[1][1], shapes[0][1]]
    if op.name == "linalg.batch_matmul" and len(shapes) >= 2:
        return [shapes[0][0], shapes[0][1], shapes[1][2], shapes[0][2]]
    return shapes[-1] if shapes else []


def _body(op) -> list[str]:
    names = []
    for region in op.regions:
        for block in region.blocks:
            names.extend(o.name for o in block.operations if o.name != "linalg.yield")
    return names


def _source(value):
    """The linalg op whose result `value` is, looking through reshapes and slices."""
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return None
        if owner.name.startswith("linalg."):
            return owner
        if owner.name in ("tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape",
                          "tensor.extract_slice", "tensor.cast"):
            value = owner.operands[0]
            continue
        return None


def _is_contraction(op) -> bool:
    from ..._mlir import linalg
    try:
        return bool(linalg.isa_contraction_op(op))
    except (TypeError, ValueError):
        return False


def _reasons(op, index_of) -> list[str]:
    """Why each input computed by another group was not fused into this one."""
    reasons = []
    n_in = len(op.operands) - len(op.results)
    for value in list(op.operands)[:n_in]:
        producer = _source(value)
        if producer is None or producer.name == "linalg.fill" or producer not in index_of:
            continue
        j = index_of[producer]
        if _is_contraction(producer):
            why = "a product's result is stored (its epilogue runs on it in place)"
        elif "reduction" in _iterators(producer):
            why = "a reduction's result is stored"
        elif _is_contraction(op):
            why = "a product's operand is not fused: it would be computed once per output column"
        elif len(list(producer.results[0].uses)) > 1:
            why = f"read by {len(list(producer.results[0].uses))} ops; too costly to recompute in each"
        else:
            why = "not fusable (its indexing does not map onto this group's loops)"
        if f"#{j}: {why}" not in reasons:
            reasons.append(f"#{j}: {why}")
    return reasons


@contextlib.contextmanager
def collecting():
    """Collect the groups `record` is given in this thread; yields the list."""
    previous = getattr(_collector, "groups", None)
    _collector.groups = groups = []
    try:
        yield groups
    finally:
        _collector.groups = previous


def record(entries: list) -> None:
    """entries: (op, schedule or None, kernel name or None) for every linalg op, in
    program order. Described only while `collecting()`."""
    out = getattr(_collector, "groups", None)
    if out is None:
        return
    index_of = {op: len(out) + i for i, (op, _, _) in enumerate(entries)}
    for op, schedule, kernel in entries:
        loops = _loops(op)
        if kernel:
            desc, vectorized = f"kernel {kernel}", True
        elif schedule is not None:
            desc = schedule.describe()
            vectorized = schedule.kind not in _SCALAR_KINDS
        else:
            desc = "none"
            vectorized = bool(loops) and math.prod(loops) <= SMALL or not loops
        out.append(Group(len(out), op.name, loops, _iterators(op), _body(op), desc, vectorized,
                         sum(_nbytes(v) for v in op.operands), _reasons(op, index_of),
                         str(op.location)))


# Below this many iterations a scalar loop costs less than a call: not flagged.
MIN_FLAGGED = 256


def unvectorized(groups: list[Group], at_least: int = MIN_FLAGGED) -> list[Group]:
    """The groups left as scalar loops (no vectorized schedule, no kernel) with at least
    `at_least` iterations."""
    return [g for g in groups if not g.vectorized and math.prod(g.loops or [1]) >= at_least]


def format(groups: list[Group]) -> str:
    lines = [f"{len(groups)} fusion groups; est. total {sum(g.estimated_us for g in groups):.1f} us "
             "(rough: vectorized 48 GFLOP/s, scalar 3, memory 15 GB/s)"]
    for g in groups:
        loops = "x".join(map(str, g.loops)) or "scalar"
        kinds = "".join("r" if it == "reduction" else "p" for it in g.iterators)
        fused = sorted({b.split(".", 1)[-1] for b in g.body if b.startswith(("arith.", "math."))})
        flag = "" if g.vectorized else "  ** scalar loops **"
        lines.append(f"#{g.index:<3} {g.op:<22} [{loops}] {kinds}  {g.schedule}  "
                     f"~{g.estimated_us:.1f} us{flag}")
        if fused:
            lines.append(f"      fused: {', '.join(fused)}")
        for r in g.reasons:
            lines.append(f"      input {r}")
    return "\n".join(lines)
