"""mlxc-outline-kernels: each top-level loop nest of a large entry function (and of each
layer function mlxc-outline-layers made) becomes a function of its own, so that LLVM
code generation can be split across threads.

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

LOOPS = frozenset({"scf.for", "scf.forall", "scf.parallel", "scf.while", "affine.for",
                    "affine.parallel", "omp.parallel"})
# Cloned into a kernel rather than passed: no operands, or only operands cloned too.
_CONSTANTS = frozenset({"arith.constant", "ub.poison"})
_VIEWS = frozenset({"memref.reinterpret_cast", "memref.expand_shape", "memref.collapse_shape",
                    "memref.subview", "memref.cast", "memref.view"})
# What a kernel is made of: a loop nest, or a segment of straight-line code that
# mlxc-kernel-segments wrapped (inlined again inside the kernel).
SEGMENT = "scf.execute_region"
NESTS = LOOPS | {SEGMENT}
KERNEL_ATTR = "mlxc.kernel"
LAYER_ATTR = "mlxc.layer"  # the functions passes/outline_layers.py makes
MIN_OPS = 300


def _is_plain_memref(t) -> bool:
    if not isinstance(t, ir.MemRefType):
        return True  # a scalar: passed as it is
    m = ir.MemRefType(t)
    return (m.has_static_shape and isinstance(m.layout, ir.AffineMapAttr)
            and m.layout.value == ir.AffineMap.get_identity(m.rank, t.context))


class _Capture:
    """What a loop uses from the entry: values to pass, ops to clone into the kernel,
    and where the loop uses them."""

    def __init__(self, entry_values: set):
        self.entry_values = entry_values  # the values the entry's body defines
        self.args: list = []      # values passed, in order of first use
        self.clones: list = []    # entry ops to clone, operands before users
        self.uses: list = []      # (op, operand index, value) for each use in the loop
        self._seen: set = set()

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


def _entry_values(entry) -> set:
    """The entry's arguments and the results of the ops directly in its body: a set
    lookup per operand, where asking each operand for its owner's block took a third
    of the outlining's time."""
    values = set(entry.regions[0].blocks[0].arguments)
    for op in irutil.top_level_ops(entry):
        values.update(op.results)
    return values


def _capture(loop, entry_values: set) -> _Capture | None:
    cap = _Capture(entry_values)
    ok = True

    def visit(op):
        nonlocal ok
        for i, value in enumerate(op.operands):
            if value in entry_values:
                cap.uses.append((op, i, value))
                if not cap.add(value):
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
    # The uses found by the capture's walk: no second walk over the loop's ops.
    for op, i, value in cap.uses:
        op.operands[i] = mapping[value]
    if loop.name == SEGMENT:
        unwrap(loop)


def unwrap(segment) -> None:
    """Inline a segment's ops where it stands and erase it."""
    body = list(irutil.top_level_ops(segment))
    for op in body[:-1]:  # the last is its scf.yield
        op.move_before(segment)
    del body
    segment.erase()


def _entry_name(module) -> str:
    return irutil.string_attr(module, "mlxc.entry") or "main"


def top_level_loops(entry) -> list:
    """The loops (and segments) directly in `entry`'s body that yield nothing: what may
    be outlined."""
    # Found without wrapping each op in its dialect's class, nor walking into them.
    return [op for op in irutil.top_level_ops(entry)
            if op.name in NESTS and len(op.results) == 0]


def capture_loops(entry, loops) -> list:
    """(loop, what it captures) for each of `loops` (top-level loops of `entry`) that
    can be outlined."""
    values = _entry_values(entry)
    return [(loop, cap) for loop in loops if (cap := _capture(loop, values)) is not None]


def outline_captured(module, entry, captures, prefix: str) -> list:
    """Outline each loop of `captures` (capture_loops) into a kernel named
    `{prefix}{k}`, placed before `entry`; returns the kernels made. The constants and
    views only kernels used are left in the entry (drop_unused_entry_ops)."""
    if not captures:
        return []
    # Every kernel's empty function from one parse.
    text = "\n".join(
        f"func.func private @{prefix}{k}("
        + ", ".join(f"%a{i}: {v.type}" for i, v in enumerate(cap.args))
        + ") {\n  func.return\n}" for k, (_, cap) in enumerate(captures))
    with module.context, entry.location:
        helper = ir.Module.parse(text)
    kernels = list(irutil.top_level_ops(helper))
    for k, ((loop, cap), kernel) in enumerate(zip(captures, kernels)):
        kernel.move_before(entry)
        _outline(kernel, loop, cap, f"{prefix}{k}")
    return kernels


def drop_unused_entry_ops(entry) -> None:
    """Erase the constants and views in `entry`'s body that nothing uses any more."""
    for op in reversed(list(irutil.top_level_ops(entry))):
        if (op.name in _CONSTANTS or op.name in _VIEWS) and all(
                not list(r.uses) for r in op.results):
            op.erase()


def outline(module, entry, loops, prefix: str) -> list:
    """Outline each of `loops` (top-level loops of `entry`) that can be into a kernel
    named `{prefix}{k}`, placed before `entry`; returns the kernels made."""
    kernels = outline_captured(module, entry, capture_loops(entry, loops), prefix)
    if kernels:
        drop_unused_entry_ops(entry)
    return kernels


def entry_function(module, min_ops: int):
    """The entry function, when it is a func.func of one block and at least `min_ops`
    ops."""
    entry = irutil.find_function(module, _entry_name(module))
    if entry is None or entry.name != "func.func" or not _has_ops(entry, min_ops):
        return None
    # One block (structured control flow, as bufferization leaves it): a loop's outside
    # values are then the entry block's.
    if len(entry.regions[0].blocks) != 1:
        return None
    return entry


def _has_ops(root, count: int) -> bool:
    """Whether `root` holds at least `count` ops: a walk that stops there."""
    seen = 0

    def visit(_):
        nonlocal seen
        seen += 1
        return ir.WalkResult.INTERRUPT if seen >= count else ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return seen >= count


def run(module, min_ops: str = str(MIN_OPS), always: str = "false") -> None:
    if always.lower() not in ("1", "true"):
        # Kernels pay only when the JIT compiles them on a second core; kept in one
        # function, they cost a tenth more compile time (more functions through every
        # pass after this one, and LLVM inlining them back).
        from ..targets.cpu import parallel_jit
        if not parallel_jit.second_core_free():
            return
    for func in outlined_functions(module, int(min_ops)):
        loops = top_level_loops(func)
        if len(loops) >= 2:
            outline(module, func, loops, f"{irutil.sym_name(func)}_kernel")


def outlined_functions(module, min_ops: int) -> list:
    """The functions whose nests become kernels: the entry, when it has at least
    `min_ops` ops, and the layer functions of mlxc-outline-layers (which hold most of a
    model's loops) of that size."""
    entry = entry_function(module, min_ops)
    layers = [f for f in irutil.functions(module)
              if LAYER_ATTR in f.attributes and f.name == "func.func"
              and len(f.regions[0].blocks) == 1 and _has_ops(f, min_ops)]
    return ([entry] if entry is not None else []) + layers


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
