"""mlxc-outline-kernels: each top-level loop nest of a large entry function becomes a
function of its own, so that LLVM code generation can be split across threads.

After bufferization the entry holds every kernel inline, one loop nest after another.
LLVM compiles one function on one thread; the CPU target builds the program's kernels
in two modules on two threads (targets/cpu/parallel_jit.py) when they are functions.
Each kernel takes the memrefs and scalars its loop uses from the entry; the constants
and the pure view ops (reshapes, casts, subviews) it uses are cloned into it, so only
buffers with the identity layout cross the call, as the bare-pointer convention wants.
Only loops directly in the entry are outlined (a loop run once per call: one call of
a few nanoseconds), and only when the entry has at least `min-ops` ops: a small
program is not worth a second thread's start-up and stays one function.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

_LOOPS = frozenset({"scf.for", "scf.forall", "scf.parallel", "scf.while", "affine.for",
                    "affine.parallel", "omp.parallel"})
# Cloned into a kernel rather than passed: no operands, or only operands cloned too.
_CONSTANTS = frozenset({"arith.constant", "ub.poison"})
_VIEWS = frozenset({"memref.reinterpret_cast", "memref.expand_shape", "memref.collapse_shape",
                    "memref.subview", "memref.cast", "memref.view"})
KERNEL_ATTR = "mlxc.kernel"
MIN_OPS = 300


def _is_plain_memref(t) -> bool:
    if not isinstance(t, ir.MemRefType):
        return True  # a scalar: passed as it is
    m = ir.MemRefType(t)
    return (m.has_static_shape and isinstance(m.layout, ir.AffineMapAttr)
            and m.layout.value == ir.AffineMap.get_identity(m.rank, t.context))


class _Capture:
    """What a loop uses from the entry: values to pass, ops to clone into the kernel."""

    def __init__(self, entry_block):
        self.block = entry_block
        self.args: list = []      # values passed, in order of first use
        self.clones: list = []    # entry ops to clone, operands before users
        self._seen: set = set()

    def outside(self, value) -> bool:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return owner == self.block
        return owner.operation.block == self.block

    def add(self, value) -> bool:
        """Record `value`; False when the kernel cannot take it."""
        if value in self._seen:
            return True
        self._seen.add(value)
        op = irutil.defining_op(value)
        if op is not None and (op.name in _CONSTANTS or
                               (op.name in _VIEWS and len(op.results) == 1)):
            for operand in op.operands:
                if not self.add(operand):
                    return False
            if op not in self.clones:
                self.clones.append(op)
            return True
        if not _is_plain_memref(value.type):
            return False
        self.args.append(value)
        return True


def _capture(loop, entry_block) -> _Capture | None:
    cap = _Capture(entry_block)
    ok = True

    def visit(op):
        nonlocal ok
        for value in op.operands:
            if cap.outside(value) and not cap.add(value):
                ok = False
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)
    return cap if ok else None


def _outline(kernel, loop, cap: _Capture, name: str) -> None:
    """Move `loop` into `kernel` (an empty function taking cap.args), calling it."""
    body = kernel.regions[0].blocks[0]
    ret = next(iter(irutil.walk(kernel)[1:]))
    with kernel.context, loop.location:
        kernel.attributes[KERNEL_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(loop):
            ir.Operation.create("func.call", operands=list(cap.args),
                                attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
        mapping = dict(zip(cap.args, body.arguments))
        with ir.InsertionPoint(ret):
            for op in cap.clones:
                copy = op.clone()
                for i, v in enumerate(copy.operands):
                    if v in mapping:
                        copy.operands[i] = mapping[v]
                for old, new in zip(op.results, copy.results):
                    mapping[old] = new
        loop.move_before(ret)

    def visit(op):
        for i, v in enumerate(op.operands):
            if v in mapping:
                op.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)


def _entry_name(module) -> str:
    return irutil.string_attr(module, "mlxc.entry") or "main"


def run(module, min_ops: str = str(MIN_OPS), always: str = "false") -> None:
    if always.lower() not in ("1", "true"):
        # Kernels pay only when the JIT compiles them on a second core; kept in one
        # function, they cost a tenth more compile time (more functions through every
        # pass after this one, and LLVM inlining them back).
        from ..targets.cpu import parallel_jit
        if not parallel_jit.second_core_free():
            return
    name = _entry_name(module)
    entry = irutil.find_function(module, name)
    if entry is None or entry.name != "func.func" or irutil.count_ops(entry) < int(min_ops):
        return
    block = entry.regions[0].blocks[0]
    # The block's direct children, found without wrapping each in its dialect's class.
    loops = [op for op in irutil.walk(entry)
             if op.name in _LOOPS and op.block == block and len(op.results) == 0]
    if len(loops) < 2:
        return
    captures = [(loop, cap) for loop in loops if (cap := _capture(loop, block)) is not None]
    if not captures:
        return
    # Every kernel's empty function from one parse.
    text = "\n".join(
        f"func.func private @{name}_kernel{k}("
        + ", ".join(f"%a{i}: {v.type}" for i, v in enumerate(cap.args))
        + ") {\n  func.return\n}" for k, (_, cap) in enumerate(captures))
    with module.context, entry.location:
        helper = ir.Module.parse(text)
    kernels = list(irutil.top_level_ops(helper))
    for k, ((loop, cap), kernel) in enumerate(zip(captures, kernels)):
        kernel.move_before(entry)
        _outline(kernel, loop, cap, f"{name}_kernel{k}")
    # Constants and views only the kernels used are left dead in the entry.
    for op in reversed([o for o in irutil.walk(entry) if o.block == block]):
        if (op.name in _CONSTANTS or op.name in _VIEWS) and all(
                not list(r.uses) for r in op.results):
            op.erase()


PASS = PythonPass(
    argument="mlxc-outline-kernels",
    summary="Outline each top-level loop nest of a large entry function into a function",
    run=run,
    options={"min-ops": f"outline only when the entry has at least this many ops "
                        f"(default {MIN_OPS})",
             "always": "outline even while no core is free for a second JIT thread "
                       "(default false: see targets/cpu/parallel_jit.second_core_free)"},
    defaults={"min-ops": str(MIN_OPS), "always": "false"},
)
