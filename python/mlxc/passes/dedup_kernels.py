"""mlxc-dedup-kernels: loop nests identical up to the buffers they use become one
function, called once for each of them, so that every later pass and LLVM compile it
once (a model's twelve layers: one layer's code).

After bufferization a program is its entry function: one top-level loop nest per fused
op, one after another. Layers that repeat (a transformer's blocks, an RNN's unrolled
steps) repeat their loop nests exactly, with other buffers. Like XLA, which compiles
identical fusions once, and IREE, which deduplicates identical executables, nests
are compared as the kernels they would be outlined into (outline_kernels: the buffers
a nest uses become arguments in order of first use, the constants and views it uses
are cloned in): the text of the nest and of those constants and views, with values
numbered by first appearance, and the argument types. The text is exact (no elided
constant, no location), so equal nests are interchangeable: the first of each group
becomes a kernel, the others calls of it with their own buffers. Nests are first
grouped by their text without SSA names (one print of the entry; a necessary
condition), so a program with nothing repeated outlines nothing. A shared kernel is marked
`mlxc.shared_kernel`; the CPU target keeps it out of line (`no_inline`), so it is
compiled once.
"""

from __future__ import annotations

import re

from .. import irutil
from .._mlir import ir
from . import PythonPass
from . import outline_kernels

SHARED_ATTR = "mlxc.shared_kernel"
# Below this many ops the entry is compiled quickly anyway: not worth the printing.
MIN_OPS = 300


_SSA_NAME = re.compile(r"%[\w.$-]+")


def _unnamed(text: str) -> str:
    """`text` without its SSA names: equal for two loop nests that differ only in the
    names of the values they use (and, rarely, for two that use them differently)."""
    return _SSA_NAME.sub("%", text)


_SSA_SPLIT = re.compile(r"(%[\w.$-]+)")


def _canonical(text: str) -> tuple:
    """`text` up to a one-to-one renaming of its values: the text without SSA names and
    the names numbered in order of first appearance (a list, not a regex callback per
    name: that took a third of this pass)."""
    parts = _SSA_SPLIT.split(text)
    ids: dict = {}
    return "%".join(parts[0::2]), tuple([ids.setdefault(n, len(ids)) for n in parts[1::2]])


def _kernel_key(loop, cap, text_of: dict) -> tuple:
    """What the kernel outlined from `loop` would be, up to names: the text of the ops
    cloned into it and of the loop, renamed alike, and the types of its arguments, in
    the order the capture passes them (the order of first use: the same for loops
    whose texts are the same)."""
    body = "\n".join([text_of[op] for op in cap.clones] + [text_of[loop]])
    return _canonical(body), tuple(str(v.type) for v in cap.args)


def run(module, min_ops: str = str(MIN_OPS)) -> None:
    entry = outline_kernels.entry_function(module, int(min_ops))
    if entry is None:
        return
    ops = list(irutil.top_level_ops(entry))
    texts = irutil.top_level_texts(entry, len(ops))
    if texts is None:
        return
    groups: dict[str, list] = {}
    for op, text in zip(ops, texts):
        if op.name in outline_kernels.NESTS and len(op.results) == 0:
            groups.setdefault(_unnamed(text), []).append(op)
    twins = [loop for same in groups.values() if len(same) > 1 for loop in same]
    if not twins:
        return
    text_of = dict(zip(ops, texts))
    same: dict[tuple, list] = {}
    for loop, cap in outline_kernels.capture_loops(entry, twins):
        same.setdefault(_kernel_key(loop, cap, text_of), []).append((loop, cap))
    shared = [members for members in same.values() if len(members) > 1]
    if not shared:
        return
    # The first loop of each group becomes the kernel; the others, calls of it.
    prefix = f"{outline_kernels._entry_name(module)}_shared"
    kernels = outline_kernels.outline_captured(module, entry, [m[0] for m in shared], prefix)
    unit = ir.UnitAttr.get(module.context)
    for kernel, members in zip(kernels, shared):
        kernel.attributes[SHARED_ATTR] = unit
        callee = ir.FlatSymbolRefAttr.get(irutil.sym_name(kernel), module.context)
        for loop, cap in members[1:]:
            with ir.InsertionPoint(loop), loop.location:
                ir.Operation.create("func.call", operands=list(cap.args),
                                    attributes={"callee": callee})
            loop.erase()
    outline_kernels.drop_unused_entry_ops(entry)


PASS = PythonPass(
    argument="mlxc-dedup-kernels",
    summary="Loop nests identical up to their buffers as one kernel function, called for each",
    run=run,
    options={"min-ops": f"only when the entry has at least this many ops (default {MIN_OPS})"},
    defaults={"min-ops": str(MIN_OPS)},
)
