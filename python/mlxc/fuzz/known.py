"""Known bugs: patterns of programs that fail for a reason already recorded.

The CI sample (`test/pytest/test_fuzz.py`) does not run programs matching these
(`FuzzCase.exclude_known`): the suite holds no test expected to fail. Each entry
names the bug and where it is being fixed; delete it once the fix is merged, and the
sample covers the pattern again.
"""

from __future__ import annotations

from typing import Optional

from .program import Program


def _gather_on_slice(p: Program) -> bool:
    # A gather (take, take_along_axis) whose operand is a slice of another value, or a
    # pre-sliced operand: the fused vector.gather reads the slice with the unsliced
    # operand's strides (wrong values, or an unrealized_conversion_cast left at the
    # llvm stage). Fixed on branch "fixes" (mlxc-strided-gathers, 311f53d).
    n = len(p.inputs)
    for s in p.steps:
        if s.op in ("take", "take_along_axis"):
            if "limit" in s.params and (any(s.params["start"]) or
                                        s.params["limit"] != p.value(s.args[0]).shape):
                return True
            a = s.args[0]
            if a >= n and p.steps[a - n].op in ("slice", "dynamic_slice"):
                return True
    return False


def _case_values_shared(p: Program) -> bool:
    # A case (lax.cond / lax.switch / stablehlo.case) whose result, or a value its branches read, is also
    # returned or read by another step: one-shot bufferization missed the conflicts of
    # scf.index_switch's tensor results, so a step ran in place over a value still
    # needed (c = case(...); return c, c * 3 gave c * 3 twice; a branch's operand
    # returned modified). Fixed on branch "fixes" (case as a chain of scf.if, 7fda281).
    n = len(p.inputs)
    uses = {}
    for s in p.steps:
        for a in s.args:
            uses[a] = uses.get(a, 0) + 1
    for o in p.outputs:
        uses[o] = uses.get(o, 0) + 1
    for k, s in enumerate(p.steps):
        if s.op in ("cond", "switch", "case"):
            # The case reads each operand once; its result is read by what follows.
            if any(uses.get(v, 0) > 1 for v in [n + k] + list(s.args[1:])):
                return True
    return False


KNOWN = [
    ("gather on a sliced operand (branch fixes, mlxc-strided-gathers)", _gather_on_slice),
    ("case values updated in place while still needed (branch fixes, case as scf.if)",
     _case_values_shared),
]


def known_bug(p: Program) -> Optional[str]:
    for name, matches in KNOWN:
        if matches(p):
            return name
    return None
