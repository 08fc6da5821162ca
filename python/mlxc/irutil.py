"""Small helpers over the MLIR Python API used by passes, contracts and the frontend.

Handles and erasure: these bindings keep no map of live operations. Every
`ir.Operation` (and `ir.Value`, `ir.Block`) is a bare pointer wrapper, and `op.erase()`
frees the op and everything nested in its regions while every other handle to any of
them stays "valid" to Python: using one — `.name`, `.operands`, even `hash()`, which
hashes the op's contents — reads freed memory (a crash now and then, or garbage). So a
rewrite that erases ops holds only the ops it rewrites (`ops_named`), not a whole
`walk`, and erases after its analysis when later steps still look at the IR. An op's
hash also changes when its operands or attributes do: an op used as a dict key or set
member must not be rewritten while the dict is in use (Values and Blocks hash by
identity).
"""

from __future__ import annotations

from typing import Iterator, Optional

from ._mlir import ir


def walk(op) -> list:
    """Every op nested in `op` (itself included), in pre-order.

    The callback only collects: it runs once per op (about a microsecond each from
    Python), so it binds what it calls beforehand and reads nothing of the op."""
    out: list = []
    collect = out.append
    advance = ir.WalkResult.ADVANCE

    def visit(o):
        collect(o)
        return advance

    (op.operation if hasattr(op, "operation") else op).walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def constant_int(value) -> Optional[int]:
    """The integer an arith.constant defines as `value`, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def ops_named(root, *names: str) -> list:
    """The ops nested in `root` (itself included) named one of `names`, in pre-order.

    What a rewrite that erases ops should iterate over: the list holds no handle to
    the other ops, so erasing one op leaves nothing dangling unless it has a match
    nested in its regions (pre-order puts parents first: iterate `reversed(...)` to
    rewrite nested matches before their parents)."""
    wanted = frozenset(names)
    out: list = []

    def visit(o):
        if o.name in wanted:
            out.append(o)
        return ir.WalkResult.ADVANCE

    as_operation(root).walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def top_level_ops(module) -> Iterator:
    """The ops directly in the module's body (or any op's regions), as plain
    `ir.Operation`s.

    Found by a walk that skips their regions rather than through `block.operations`,
    which wraps each op in its dialect's op class and so imports that dialect's
    Python package on first use (a tenth of a second or more for llvm or transform).
    """
    root = module.operation if hasattr(module, "operation") else module
    ops: list = []

    def visit(op):
        if op == root:
            return ir.WalkResult.ADVANCE
        ops.append(op)
        return ir.WalkResult.SKIP

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return iter(ops)


def top_level_texts(func, count: int) -> Optional[list[str]]:
    """The text of each of the `count` ops directly in `func`'s body, without
    locations, from one print of the whole function (printing each op alone would name
    the function's values for each one); None if the printed form does not have one
    line per op at the body's indent (a nested block's label, `^bb0(...)`, can sit at
    that indent: it is no op)."""
    lines = func.get_asm(enable_debug_info=False, use_local_scope=True,
                         assume_verified=True).split("\n")
    if len(lines) < 3:
        return None
    indent = len(lines[1]) - len(lines[1].lstrip(" "))
    starts = [i for i, line in enumerate(lines)
              if line.startswith(" " * indent)
              and line[indent:indent + 1] not in (" ", "}", "", "^")]
    if len(starts) != count:
        return None
    ends = starts[1:] + [len(lines) - 1]  # the last line closes the function
    return ["\n".join(lines[i:j]) for i, j in zip(starts, ends)]


def outermost(root, keep) -> list:
    """The ops nested in `root` for which `keep(op)` holds, without looking inside them
    (a kept op's own nested matches are its business), in pre-order."""
    found: list = []

    def visit(op):
        if keep(op):
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    as_operation(root).walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def op_names(root, itself: bool = True) -> frozenset:
    """The names of the ops in `root` (`root`'s own with `itself`): one walk that reads
    nothing else."""
    names: set = set()
    add, advance = names.add, ir.WalkResult.ADVANCE
    skip = [not itself]

    def visit(op):
        if skip[0]:
            skip[0] = False  # root, visited first
        else:
            add(op.name)
        return advance

    as_operation(root).walk(visit, ir.WalkOrder.PRE_ORDER)
    return frozenset(names)


def count_ops(root) -> int:
    """How many ops `root` holds, itself included."""
    n = 0

    def visit(_):
        nonlocal n
        n += 1
        return ir.WalkResult.ADVANCE

    as_operation(root).walk(visit, ir.WalkOrder.PRE_ORDER)
    return n


def functions(module) -> list:
    return [op for op in top_level_ops(module) if op.name in ("func.func", "llvm.func")]


def sym_name(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def is_public(op) -> bool:
    if "sym_visibility" not in op.attributes:
        return True
    return ir.StringAttr(op.attributes["sym_visibility"]).value == "public"


def find_function(module, name: str) -> Optional[object]:
    for f in functions(module):
        if sym_name(f) == name:
            return f
    return None


def declare_function(module, name: str, inputs: list) -> None:
    """A private func.func declaration `name(inputs) -> ()` at the end of `module`, once:
    a runtime function the generated code calls (the kernels' entry points)."""
    if find_function(module, name) is not None:
        return
    with ir.InsertionPoint(as_operation(module).regions[0].blocks[0]), ir.Location.unknown():
        ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get(name),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs, [])),
            "sym_visibility": ir.StringAttr.get("private")})


def function_type(func) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def element_type(t: ir.Type) -> ir.Type:
    """A vector's element type; any other type is its own (a scalar)."""
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def is_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) or isinstance(t, ir.UnrankedTensorType)


def module_attr(module, name: str):
    attrs = module.operation.attributes
    return attrs[name] if name in attrs else None


def string_attr(module, name: str) -> Optional[str]:
    a = module_attr(module, name)
    return ir.StringAttr(a).value if a is not None else None


def arg_attrs(func, index: int) -> dict:
    if "arg_attrs" not in func.attributes:
        return {}
    arr = ir.ArrayAttr(func.attributes["arg_attrs"])
    d = ir.DictAttr(arr[index])
    return {d[i].name: d[i].attr for i in range(len(d))}


def result_attrs(func, index: int) -> dict:
    if "res_attrs" not in func.attributes:
        return {}
    arr = ir.ArrayAttr(func.attributes["res_attrs"])
    d = ir.DictAttr(arr[index])
    return {d[i].name: d[i].attr for i in range(len(d))}


def replace_op(op, build) -> None:
    """Replace single-result `op` by the value `build()` creates, built just before `op`
    and at its location; then erase `op`."""
    with ir.InsertionPoint(op), op.location:
        value = build()
    op.result.replace_all_uses_with(value)
    op.erase()


def clone_ops(ops, mapping: dict) -> list:
    """Clone `ops` in order at the current insertion point, their operands remapped
    through `mapping` (old value -> new value), which gains each clone's results."""
    clones = []
    for op in ops:
        clone = op.operation.clone()
        for i, v in enumerate(clone.operands):
            if v in mapping:
                clone.operands[i] = mapping[v]
        for old, new in zip(op.operation.results, clone.results):
            mapping[old] = new
        clones.append(clone)
    return clones


def transpose(value, perm: list[int]):
    """A stablehlo.transpose of `value` whose dim j is `value`'s dim perm[j], built at the
    current insertion point; `value` itself when perm is the identity."""
    if list(perm) == list(range(len(perm))):
        return value
    t = ir.RankedTensorType(value.type)
    return ir.Operation.create(
        "stablehlo.transpose",
        results=[ir.RankedTensorType.get([t.shape[p] for p in perm], t.element_type)],
        operands=[value], attributes={"permutation": ir.DenseI64ArrayAttr.get(list(perm))}).result


def reshape(value, shape: list[int]):
    """A stablehlo.reshape of `value` to `shape`, built at the current insertion point;
    `value` itself when it has that shape."""
    t = ir.RankedTensorType(value.type)
    if list(shape) == list(t.shape):
        return value
    return ir.Operation.create(
        "stablehlo.reshape", results=[ir.RankedTensorType.get(list(shape), t.element_type)],
        operands=[value]).result


def as_operation(x):
    """The Operation behind an OpView (an Operation is returned as it is)."""
    return x.operation if hasattr(x, "operation") else x


def erase_unused(ops) -> None:
    """Erase, last first, each of `ops` whose results nothing reads (so a view goes before the
    buffer it views, and a chain of dead ops goes in one call)."""
    for op in reversed(list(ops)):
        if all(not list(r.uses) for r in op.results):
            op.erase()


def top_level_ancestor(op):
    """The op directly in the body of the function holding `op` that is or holds it."""
    op = as_operation(op)
    while op.parent is not None and op.parent.name != "func.func":
        op = as_operation(op.parent)
    return op


def defining_op(value):
    """The Operation that defines `value`, or None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else as_operation(owner)


def is_zero_constant(value) -> bool:
    """Whether `value` is an arith.constant 0 (or 0.0, or -0.0)."""
    const = defining_op(value)
    if const is None or const.name != "arith.constant":
        return False
    attr = const.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value == 0.0
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value == 0
    return False


def dies_at(value, op) -> bool:
    """Whether every use of `value` other than `op` is an op of `op`'s block before it."""
    for use in value.uses:
        user = as_operation(use.owner)
        if user != op and (user.block != op.block or not user.is_before_in_block(op)):
            return False
    return True


def blocks(root) -> list:
    """Every block in root's regions and in the regions nested in them, outer first."""
    found = []

    def visit(op):
        for region in op.regions:
            found.extend(region.blocks)
        return ir.WalkResult.ADVANCE

    as_operation(root).walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def dps_segments(op) -> tuple[int, int]:
    """How many inputs and how many inits a destination-style (linalg) op has."""
    sizes = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
    return sizes[0], sizes[1]


def indexing_maps(op) -> list:
    """A linalg op's indexing maps as AffineMaps."""
    arr = ir.ArrayAttr(op.attributes["indexing_maps"])
    return [ir.AffineMapAttr(arr[i]).value for i in range(len(arr))]
