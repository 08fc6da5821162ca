"""mlxc-outline-layers: runs of StableHLO ops that repeat in the entry (a model's
layers, a training step's backward layers) become one private function, called once
per repetition, so every pass after the import stage and LLVM compile one layer, not
twelve.

mlxc-dedup-kernels finds repeated loop nests after bufferization, so LLVM compiles a
layer once, but the fuse, bufferize and lower stages still work on every copy: on a
12-layer decoder they were nine tenths of the compile. XLA compiles identical fusions
once; IREE deduplicates identical executables; both still fuse every copy. Here the
repetition is found where it is cheapest to find and pays most: in the StableHLO the
program arrives as, before any stage multiplies its ops.

A traced model is a sequence of ops in the order the tracer met them, so a layer
applied L times is a period of that sequence: op i and op i+P have the same printed
text without value names (name, attributes, types, regions) and read the same
constants. Candidate periods are the distances between repeated ops; a run of such
pairs is cut into blocks of P ops, aligned where the fewest values cross the first
block's edges, and kept where consecutive blocks read alike: every operand, in each
block, is the same constant, the value at the same offset inside the block, or a value
from outside it (a layer's weights, the previous layer's output, a backward layer's
saved activations), which becomes an argument of the function. The family that
outlines the most ops wins; then the search runs again on what is left (the forward
and backward layers of a training step are two families).
Constants are cloned into the function. A value a block defines and anything after it
uses (in any block) is a result. The call is marked `no_inline`, so the inliner of
the bufferize stage leaves it, and bufferization passes buffers across it (function
boundaries with identity layouts). Fusion does not cross the call: a layer's last op
(the residual add) is not fused into the next layer's first; a layer is hundreds of
ops, so that is one boundary in hundreds.
"""

from __future__ import annotations

import collections
import re

from .. import irutil
from .._mlir import ir
from . import PythonPass
from . import outline_kernels

LAYER_ATTR = outline_kernels.LAYER_ATTR
# A block of fewer ops is not worth a call (an optimizer's per-leaf update, a few
# elementwise ops, fuses better inline), nor is a family saving fewer ops in all.
MIN_BLOCK_OPS = 24
MIN_SAVED_OPS = 96
# Periods tried per search (the most frequent distances between repeated ops), and
# families outlined per program.
_CANDIDATES = 8
_FAMILIES = 4
_CONSTANTS = frozenset({"stablehlo.constant", "arith.constant"})
# A block is outlined only if it holds a product: a layer. Elementwise runs (an
# optimizer's update of each parameter) compile quickly anyway and, inline, fuse with
# their neighbours (AdamW over a GPT's parameters: 1.5x slower and 1.5x longer to
# compile as calls).
_PRODUCTS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})
# A value's name, with the result number of a multi-result op (`%3#1`): the text of a
# layer reading a call's results must not depend on which call it reads.
_SSA_NAME = re.compile(r"%[\w.$-]+(?:#\d+)?")
_ARG = ("x",)  # an operand that is an argument of the entry


def _captured(op) -> list:
    """The values defined outside `op` that ops nested in it use (an if/while region
    reading the enclosing function's values): such an op is never outlined."""
    inside: set = set()
    out: list = []

    def visit(o):
        if o != op:
            for v in o.operands:
                if v not in inside:
                    out.append(v)
            inside.update(o.results)
        for region in o.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


class _Program:
    """The entry's ops as a sequence: constants left out (referred to by value), each
    other op's text id and, per operand, what it refers to: ("c", constant's text id),
    ("o", distance back, result number) or ("x",) for an argument of the entry."""

    def __init__(self, entry, min_ops: int):
        top = list(irutil.top_level_ops(entry))
        self.ok = len(top) > min_ops
        if not self.ok:
            return  # too small to hold two blocks: not printed
        texts = irutil.top_level_texts(entry, len(top))
        self.ok = texts is not None and top[-1].name == "func.return"
        if not self.ok:
            return
        ids: dict[str, int] = {}
        const_key: dict = {}  # constant value -> its ref
        self.ops: list = []   # the non-constant ops, terminator excluded
        self.sig: list[int] = []
        self.refs: list[tuple] = []
        self.index: dict = {}  # result value -> (position, result number)
        self.last_use: dict = {}  # (position, result number) -> last user's position
        self.products = [0]  # products[i]: how many of ops[:i] are products

        def used(v, at):
            where = self.index.get(v)
            if where is not None and self.last_use.get(where, -1) < at:
                self.last_use[where] = at

        for op, text in zip(top[:-1], texts[:-1]):
            key = _SSA_NAME.sub("%", text)
            if op.name in _CONSTANTS and len(op.results) == 1:
                const_key[op.results[0]] = ("c", ids.setdefault(key, len(ids)))
                continue
            i = len(self.ops)
            refs = []
            for v in op.operands:
                if v in const_key:
                    refs.append(const_key[v])
                elif v in self.index:
                    p, r = self.index[v]
                    refs.append(("o", i - p, r))
                    used(v, i)
                else:
                    refs.append(_ARG)
            if len(op.regions):
                captured = _captured(op)
                if captured:
                    key = f"{key}\0{i}"  # unique: matches nothing
                    for v in captured:
                        used(v, i)
            self.ops.append(op)
            self.products.append(self.products[-1] + (op.name in _PRODUCTS))
            self.sig.append(ids.setdefault(key, len(ids)))
            self.refs.append(tuple(refs))
            for r, v in enumerate(op.results):
                self.index[v] = (i, r)
        for v in top[-1].operands:
            used(v, len(self.ops))

    def alike(self, i: int, j: int) -> bool:
        """Whether op j may be op i in another block: the same text, the same constants
        where i reads one (what is inside a block is checked per block: pattern())."""
        if self.sig[i] != self.sig[j]:
            return False
        for a, b in zip(self.refs[i], self.refs[j]):
            if (a[0] == "c" or b[0] == "c") and a != b:
                return False
        return True

    def pattern(self, first: int, period: int) -> tuple:
        """What each op of ops[first:first+period] reads: a constant, a value of the
        block (by offset) or one from outside."""
        out = []
        for t in range(period):
            out.append(tuple(
                ref if ref[0] == "c" else ("in", ref[1], ref[2])
                if ref[0] == "o" and ref[1] <= t else _OUT
                for ref in self.refs[first + t]))
        return tuple(out)

    def defs_used_after(self, first: int, period: int) -> list[tuple[int, int]]:
        """(offset, result number) of the values ops[first:first+period] define that an
        op after them (or the entry's return) uses."""
        end = first + period
        return [(t, r) for t in range(period)
                for r in range(len(self.ops[first + t].results))
                if self.last_use.get((first + t, r), -1) >= end]


_OUT = ("out",)


def _candidate_periods(prog: _Program, min_block: int) -> list[int]:
    """The most frequent distances between consecutive occurrences of the same op."""
    last: dict[int, int] = {}
    counts: collections.Counter = collections.Counter()
    n = len(prog.sig)
    for i, s in enumerate(prog.sig):
        j = last.get(s)
        if j is not None and min_block <= i - j <= n // 2:
            counts[i - j] += 1
        last[s] = i
    return [p for p, _ in counts.most_common(_CANDIDATES)]


def _blocks_in_run(prog: _Program, start: int, length: int, period: int) -> list[int]:
    """The starts of the most consecutive blocks that read alike within ops[start:
    start+length+period] (a period-P run): aligned where the fewest values cross the
    first block's edges (a layer's input and output, not its middle)."""
    count = length // period + 1
    slack = length - (count - 1) * period
    step = max(1, (slack + 1) // 16)
    at = min(range(start, start + slack + 1, step),
             key=lambda f: _crossing(prog, f, period))
    starts = [at + j * period for j in range(count)]
    best: list[int] = []
    run: list[int] = []
    previous = None
    for s in starts:
        pattern = prog.pattern(s, period)
        run = run + [s] if pattern == previous else [s]
        previous = pattern
        if len(run) > len(best):
            best = run
    return best


def _crossing(prog: _Program, first: int, period: int) -> int:
    """How many values cross the edges of ops[first:first+period]: read from before
    it, or defined in it and read after it."""
    inputs = set()
    for t in range(period):
        op = prog.ops[first + t]
        for k, ref in enumerate(prog.refs[first + t]):
            if ref[0] == "o" and ref[1] > t:
                inputs.add(op.operands[k])
    return len(inputs) + len(prog.defs_used_after(first, period))


def _best_family(prog: _Program, min_block: int, min_saved: int):
    """(period, block starts) of the repeated blocks that outline the most ops, or
    None."""
    n = len(prog.sig)
    best = None
    for period in _candidate_periods(prog, min_block):
        run_start = None
        for i in range(n - period + 1):
            match = i < n - period and prog.alike(i, i + period)
            if match and run_start is None:
                run_start = i
            elif not match and run_start is not None:
                length = i - run_start
                if length >= period and (length // period) * period >= min_saved:
                    starts = _blocks_in_run(prog, run_start, length, period)
                    saved = (len(starts) - 1) * period
                    if len(starts) >= 2 and saved >= min_saved and \
                            prog.products[starts[0] + period] > prog.products[starts[0]] and \
                            (best is None or saved > best[0]):
                        best = (saved, period, starts)
                run_start = None
    return None if best is None else best[1:]


class _Family:
    """Blocks that read alike op for op, with the values crossing their edges."""

    def __init__(self, prog: _Program, period: int, starts: list[int]):
        self.prog, self.period, self.starts = prog, period, starts
        pattern = prog.pattern(starts[0], period)
        # (offset, operand number) of every use of a value from outside the block.
        self.slots = [(t, k) for t in range(period) for k, ref in enumerate(pattern[t])
                      if ref is _OUT]
        # Slots share an argument when they read one value in every block.
        groups: dict[tuple, int] = {}
        self.slot_arg: list[int] = []
        self.arg_slot: list[tuple[int, int]] = []
        for t, k in self.slots:
            key = tuple(prog.ops[s + t].operands[k] for s in starts)
            if key not in groups:
                groups[key] = len(groups)
                self.arg_slot.append((t, k))
            self.slot_arg.append(groups[key])
        results = set()
        for s in starts:
            results.update(prog.defs_used_after(s, period))
        self.results = sorted(results)

    def plain(self) -> bool:
        """Whether every value crossing the blocks' edges is a tensor of static shape
        (what bufferization passes across a call as a plain buffer; not a token)."""
        first = self.starts[0]
        values = [self.prog.ops[first + t].operands[k] for t, k in self.arg_slot] + \
            [self.prog.ops[first + t].results[r] for t, r in self.results]
        return all(isinstance(v.type, ir.RankedTensorType)
                   and ir.RankedTensorType(v.type).has_static_shape for v in values)


def _outline(module, entry, fam: _Family, name: str) -> None:
    prog = fam.prog
    first = fam.starts[0]
    block0 = [prog.ops[first + t] for t in range(fam.period)]
    arg_types = [block0[t].operands[k].type for t, k in fam.arg_slot]
    res_types = [block0[t].results[r].type for t, r in fam.results]
    with module.context, entry.location:
        # Parsed empty (as outline_kernels makes its kernels), given its results below.
        helper = ir.Module.parse(
            f"func.func private @{name}("
            + ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
            + ") attributes {" + LAYER_ATTR + ", no_inline} {\n  func.return\n}")
        func = next(irutil.top_level_ops(helper))
        func.move_before(entry)
        body = func.regions[0].blocks[0]
        ret = next(iter(irutil.walk(func)[1:]))
        mapping: dict = {}
        slot_of = {slot: a for slot, a in zip(fam.slots, fam.slot_arg)}
        with ir.InsertionPoint(ret):
            for t, op in enumerate(block0):
                operands = []
                for k, v in enumerate(op.operands):
                    if (t, k) in slot_of:
                        operands.append(body.arguments[slot_of[(t, k)]])
                    elif v in mapping:
                        operands.append(mapping[v])
                    else:  # a constant: cloned once
                        c = irutil.defining_op(v).clone()
                        mapping[v] = c.results[0]
                        operands.append(c.results[0])
                copy = op.clone()
                for k, v in enumerate(operands):
                    copy.operands[k] = v
                for old, new in zip(op.results, copy.results):
                    mapping[old] = new
            ir.Operation.create("func.return",
                                operands=[mapping[block0[t].results[r]] for t, r in fam.results])
        ret.erase()
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(arg_types, res_types))
        callee = ir.FlatSymbolRefAttr.get(name)
        for s in fam.starts:
            ops = [prog.ops[s + t] for t in range(fam.period)]
            args = [ops[t].operands[k] for t, k in fam.arg_slot]
            with ir.InsertionPoint(ops[-1]), ops[-1].location:
                call = ir.Operation.create("func.call", results=res_types, operands=args,
                                           attributes={"callee": callee,
                                                       "no_inline": ir.UnitAttr.get()})
            call.move_after(ops[-1])
            for (t, r), new in zip(fam.results, call.results):
                ops[t].results[r].replace_all_uses_with(new)
            for op in reversed(ops):
                op.erase()


def run(module, min_block: str = str(MIN_BLOCK_OPS), min_saved: str = str(MIN_SAVED_OPS)) -> None:
    entry = outline_kernels.entry_function(module, 1)
    if entry is None:
        return
    taken = {irutil.sym_name(f) for f in irutil.functions(module)}
    for k in range(_FAMILIES):
        prog = _Program(entry, 2 * int(min_block))
        if not prog.ok or len(prog.ops) < 2 * int(min_block):
            return
        found = _best_family(prog, int(min_block), int(min_saved))
        if found is None:
            return
        fam = _Family(prog, *found)
        if not fam.plain():
            return
        name = f"{irutil.sym_name(entry)}_layer{k}"
        while name in taken:
            name += "_"
        taken.add(name)
        _outline(module, entry, fam, name)


PASS = PythonPass(
    argument="mlxc-outline-layers",
    summary="Runs of ops that repeat in the entry (a model's layers) as one function called for each",
    run=run,
    options={"min-block": f"the fewest ops a repeated block has (default {MIN_BLOCK_OPS})",
             "min-saved": f"the fewest ops a family of blocks must save (default {MIN_SAVED_OPS})"},
    defaults={"min-block": str(MIN_BLOCK_OPS), "min-saved": str(MIN_SAVED_OPS)},
)
