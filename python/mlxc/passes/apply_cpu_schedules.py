"""mlxc-apply-cpu-schedules: tile and vectorize linalg ops on tensors for the host CPU.

`mlxc.targets.cpu.schedules.choose` picks tile sizes per op kind and shape; this
pass writes them as a transform-dialect script (one named sequence per op, so that
a schedule the transforms reject leaves that op alone instead of failing the
compile) and runs it with the transform interpreter. A last sequence vectorizes
every linalg op of each function (each is now a small tile; one the vectorizer
cannot handle stays a loop nest), lowers vector contractions to broadcast + FMA and
transposes to shuffles (an 8x8 tile to one 64-lane shuffle), and casts away leading
unit dims (so that the read and the write of an accumulator match). Row reductions
then get a halving tree (`targets/cpu/reduction_trees.py`), and loop-invariant
transfers are hoisted (the matmul and convolution accumulators stay in registers
across their reduction loops).
"""

from __future__ import annotations

from dataclasses import replace

from .. import irutil
from .._mlir import ir, transform_interpreter
from . import PythonPass

_TAG = "mlxc.schedule"
_VECTORIZE_TAG = "mlxc.vectorize"
_VECTORIZE_OPS_TAG = "mlxc.vectorize_ops"  # a function whose linalg ops are vectorized one by one
_VECTORIZE_OP_TAG = "mlxc.vectorize_op"
_ANY = "!transform.any_op"

# Vector contractions to broadcast + FMA, transposes to shuffles (an 8x8 tile to one
# 64-lane shuffle), leading unit dims cast away (the read and the write of an
# accumulator then match).
_LOWERINGS = """
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers"""

# Functions tagged _VECTORIZE_TAG get every child vectorized, tensor.insert_slice
# included. Functions holding an insert the vectorizer gets wrong (_unsafe_to_vectorize)
# get only their linalg ops vectorized, one at a time (one that fails stays a loop
# nest), and then the patterns vectorize_children applies besides: one strided insert
# (the gradient of a stride-2 convolution) left a whole ResNet training step scalar.
_VECTORIZE = f"""
  transform.named_sequence @vectorize(%root: {_ANY} {{transform.readonly}}) {{
    %f = transform.structured.match ops{{["func.func"]}} attributes{{{_VECTORIZE_TAG}}} in %root
      : ({_ANY}) -> {_ANY}
    %v = transform.structured.vectorize_children_and_apply_patterns %f {{vectorize_nd_extract}}
      : ({_ANY}) -> {_ANY}
    transform.apply_patterns to %v {{{_LOWERINGS}
    }} : {_ANY}
    %ops = transform.structured.match attributes{{{_VECTORIZE_OP_TAG}}} in %root
      : ({_ANY}) -> {_ANY}
    transform.foreach %ops : {_ANY} {{
    ^bb0(%op: {_ANY}):
      transform.sequence %op : {_ANY} failures(suppress) {{
      ^bb1(%one: {_ANY}):
        transform.structured.vectorize %one {{vectorize_nd_extract}} : {_ANY}
      }}
    }}
    %g = transform.structured.match ops{{["func.func"]}} attributes{{{_VECTORIZE_OPS_TAG}}} in %root
      : ({_ANY}) -> {_ANY}
    transform.apply_patterns to %g {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.sink_ops
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    }} : {_ANY}
    transform.apply_patterns to %g {{{_LOWERINGS}
    }} : {_ANY}
    transform.yield
  }}"""

_GENERALIZE = f"""
  transform.named_sequence @generalize(%root: {_ANY} {{transform.readonly}}) {{
    %h = transform.structured.match attributes {{{_TAG} = -1 : i64}} in %root : ({_ANY}) -> {_ANY}
    %g = transform.structured.generalize %h : ({_ANY}) -> {_ANY}
    transform.yield
  }}"""


def _tile_sequence(index: int, schedule) -> str:
    lines = [f"  transform.named_sequence @op{index}(%root: {_ANY} {{transform.readonly}}) {{",
             f"    %h0 = transform.structured.match attributes {{{_TAG} = {index} : i64}} "
             f"in %root : ({_ANY}) -> {_ANY}"]
    handle = "%h0"
    for level, sizes in enumerate(schedule.levels):
        loops = sum(1 for s in sizes if s)
        if not loops:
            continue
        if level < schedule.parallel_levels:
            # scf.forall: its tensor.parallel_insert_slice is left alone by the
            # vectorizer, which would turn a plain insert_slice of a whole cache
            # tile into one huge vector copy.
            lines.append(f"    %t{level}, %l{level} = transform.structured.tile_using_forall "
                         f"{handle} tile_sizes {sizes} : ({_ANY}) -> ({_ANY}, {_ANY})")
        else:
            results = ", ".join([_ANY] * (loops + 1))
            loop_names = f", %l{level}:{loops}" if loops > 1 else f", %l{level}"
            lines.append(f"    %t{level}{loop_names} = transform.structured.tile_using_for "
                         f"{handle} tile_sizes {sizes} : ({_ANY}) -> ({results})")
        handle = f"%t{level}"
    if schedule.reduction:
        lines.append(f"    %fill, %part, %merge, %rl = transform.structured.tile_reduction_using_for "
                     f"{handle} by tile_sizes = {schedule.reduction} : ({_ANY}) -> "
                     f"({_ANY}, {_ANY}, {_ANY}, {_ANY})")
    if schedule.decompose:
        lines.append(f"    %d = transform.structured.decompose {handle} : ({_ANY}) -> {_ANY}")
    lines.append("    transform.yield\n  }")
    return "\n".join(lines)


def _tag(op, value: int, tag: str = _TAG) -> None:
    op.attributes[tag] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _linalg_ops(module) -> list:
    ops = irutil.walk(module)
    return [op for op, name in zip(ops, [op.name for op in ops]) if name.startswith("linalg.")
            and name not in ("linalg.yield", "linalg.index")]


def _sequences(script) -> dict:
    """The script's named sequences by name (found once, not once per application)."""
    return {irutil.sym_name(op): op for op in irutil.top_level_ops(script)}


def _apply(module, script, name: str, sequences: dict = None) -> bool:
    sequence = (sequences or _sequences(script))[name]

    def swallow(diagnostic) -> bool:
        # A schedule the transforms reject leaves the op as it was: a slower but
        # correct program, not an error for the user.
        return True

    handler = module.context.attach_diagnostic_handler(swallow)
    try:
        transform_interpreter.apply_named_sequence(module, sequence, script)
        return True
    except Exception:  # noqa: BLE001 - see `swallow`
        return False
    finally:
        handler.detach()


def _script(module, body: str):
    return ir.Module.parse("module attributes {transform.with_named_sequence} {\n" + body
                           + "\n}", context=module.context)


_HOIST = f"""
  transform.named_sequence @hoist(%root: {_ANY} {{transform.readonly}}) {{
    %loops = transform.structured.match ops{{["scf.for"]}} in %root : ({_ANY}) -> {_ANY}
    transform.loop.hoist_loop_invariant_subsets %loops : {_ANY}
    transform.yield
  }}"""


def _hoist(module) -> None:
    """Hoist loop-invariant reads and writes out of loops, innermost loops first: the
    matmul accumulator then lives in registers across the whole reduction loop. The
    match lists the loops in post-order, inner loops before the loops around them (one
    match, not one per loop: each match walks the whole module)."""
    _apply(module, _script(module, _HOIST), "hoist")


def _in_rank0_linalg(op) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith("linalg.") and "iterator_types" in parent.attributes:
            return len(ir.ArrayAttr(parent.attributes["iterator_types"])) == 0
        parent = parent.parent
    return False


def _unsafe_to_vectorize(func) -> bool:
    # The vectorizer turns tensor.insert_slice into a transfer_write and drops its
    # strides (an interior-padded conv_transpose input came out wrong) and the dims a
    # rank-reducing insert drops (a column written along a row), and it crashes the
    # process on a rank-0 linalg op that reads with tensor.extract (jnp.quantile of a
    # vector): leave such functions unvectorized, only tiled. An insert of elements
    # narrower than a byte (a boolean dynamic_update_slice) would become a vector<Nxi1>
    # transfer, which LLVM loads and stores as packed bits while the buffer holds a
    # byte per element: only the first element was written.
    from ..targets.cpu.schedules import has_sub_byte
    for op in irutil.ops_named(func, "tensor.extract", "tensor.insert_slice"):
        if op.name == "tensor.extract" and _in_rank0_linalg(op):
            return True
        if op.name != "tensor.insert_slice":
            continue
        if has_sub_byte(op):
            return True
        strided = any(s != 1 for s in ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
        source, dest = op.operands[0].type, op.operands[1].type
        if strided or not _keeps_trailing_dims(op, ir.ShapedType(source), ir.ShapedType(dest)):
            return True
    return False


def _vectorizable_alone(op) -> bool:
    """Whether a linalg op of a function left to per-op vectorization may be vectorized:
    not a rank-0 op reading with tensor.extract, on which the vectorizer crashes."""
    if "iterator_types" in op.attributes and not len(ir.ArrayAttr(op.attributes["iterator_types"])):
        return not any(inner.name == "tensor.extract" for block in op.regions[0].blocks
                       for inner in block.operations)
    return True


def _keeps_trailing_dims(insert, source, dest) -> bool:
    # The vectorizer writes the source along the destination's last dimensions, which
    # is right when the insert drops only leading unit dimensions: a row, or lax.scan
    # storing one step's scalar or row into its stacked output (rank 0 into rank 1).
    sizes = list(ir.DenseI64ArrayAttr(insert.attributes["static_sizes"]))
    lead = dest.rank - source.rank
    return all(s == 1 for s in sizes[:lead]) and sizes[lead:] == list(source.shape)


def _function_name(op) -> str:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return irutil.sym_name(parent) if parent is not None else ""


def run(module) -> None:
    from ..targets.cpu import fusion_report, library_calls, reduction_trees, schedules

    library_calls.set_aside(module)  # the runtime's kernel computes them: not vectorized
    # Named ops without a schedule of their own (transpose, pooling, ...) become
    # linalg.generic, which the elementwise schedule tiles like any other.
    linalg_ops = _linalg_ops(module)
    others = [op for op in linalg_ops if op.name not in schedules.NAMED
              and not library_calls.is_set_aside(op)]
    for op in others:
        _tag(op, -1)
    if others:
        _apply(module, _script(module, _GENERALIZE), "generalize")
        linalg_ops = _linalg_ops(module)  # the generalized ops replaced the named ones
    chosen, entries = [], []
    for op in linalg_ops:
        if _TAG in op.attributes:
            del op.attributes[_TAG]
        schedule = schedules.choose(op)
        entries.append([op, schedule, "runtime" if library_calls.is_set_aside(op) else None])
        if schedule is None:
            continue
        _tag(op, len(chosen))
        chosen.append(schedule)
    unsafe = set()
    for func in irutil.functions(module):
        if func.name == "func.func" and not _unsafe_to_vectorize(func):
            func.attributes[_VECTORIZE_TAG] = ir.UnitAttr.get()
        elif func.name == "func.func":
            unsafe.add(irutil.sym_name(func))
            func.attributes[_VECTORIZE_OPS_TAG] = ir.UnitAttr.get()
    for entry in entries:  # tiled but not vectorized: scalar code, as the report says
        if entry[1] is not None and _function_name(entry[0]) in unsafe \
                and not _vectorizable_alone(entry[0]):
            entry[1] = replace(entry[1], kind="scalar")
    fusion_report.record(entries)  # before the ops are tiled away
    script = _script(module, "\n".join(_tile_sequence(i, s) for i, s in enumerate(chosen))
                     + _VECTORIZE)
    sequences = _sequences(script)
    for i in range(len(chosen)):
        _apply(module, script, f"op{i}", sequences)
    for func in irutil.functions(module):
        if irutil.sym_name(func) in unsafe:
            for op in _linalg_ops(func):  # the tiles, which kept no tag of their own
                if _vectorizable_alone(op):
                    op.attributes[_VECTORIZE_OP_TAG] = ir.UnitAttr.get()
    _apply(module, script, "vectorize", sequences)
    # One walk of the vectorized module drops the tags (nothing below reads them) and
    # finds the row reductions.
    reductions: list = []
    advance = ir.WalkResult.ADVANCE

    def visit(op):
        attrs = op.attributes
        if _TAG in attrs:
            del attrs[_TAG]
        for tag in (_VECTORIZE_TAG, _VECTORIZE_OPS_TAG, _VECTORIZE_OP_TAG):
            if tag in attrs:
                del attrs[tag]
        if op.name == "vector.multi_reduction":
            reductions.append(op)
        return advance

    irutil.as_operation(module).walk(visit, ir.WalkOrder.PRE_ORDER)
    for op in reductions:
        reduction_trees.rewrite_row_reduction(op)
    _hoist(module)
    library_calls.put_back(module)


PASS = PythonPass(
    argument="mlxc-apply-cpu-schedules",
    summary="Tile and vectorize linalg ops on tensors with transform-dialect schedules "
            "chosen per op kind and shape",
    run=run,
)
