"""mlxc-canonical-dot-general: every dot_general with at most one dimension of each kind.

A dot_general names, per operand, batch, contracting and free dimensions, any number of
each. The fast paths (linalg.matmul / batch_matmul, the runtime's product kernel, the
CPU contraction schedule) take one of each; anything else became a rank-4+
`linalg.generic` contraction that got none of them and, being a generic, had
elementwise producers fused into its operands, recomputed once per output column
(`relu(x @ w1) @ w2` with x of rank 3 ran 21x slower than XLA). XLA's DotDecomposer
does the same canonicalization.

Each kind's dimensions are made adjacent and in one order in both operands, then
collapsed by a reshape: `[b.., m.., k..] x [b.., k.., n..]` becomes `[B, M, K] x [B, K, N]`
(a reshape of a contiguous tensor is free: a view after bufferization), and the result
`[B, M, N]` is reshaped back to `[b.., m.., n..]`. An operand whose dimensions of one
kind are already adjacent and in order is only reshaped, wherever the groups lie
(`[n1, n2, k]` stays a transposed `[N, K]`, which the layout pass and the kernel
handle); otherwise it is transposed into `[b.., m.., k..]` / `[b.., k.., n..]` first.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, stablehlo
from . import PythonPass
from .dot_general_layout import static_dot


def _product(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _groups(dims, side: int, rank: int) -> dict:
    """The operand's dimensions of each kind, batch and contracting ones in the order
    that pairs them with the other operand's, free ones in the result's order."""
    batch, contracting = dims["batch"][side], dims["contracting"][side]
    used = set(batch) | set(contracting)
    return {"b": list(batch), "c": list(contracting),
            "f": [d for d in range(rank) if d not in used]}


def _adjacent(groups: dict) -> bool:
    """Whether each kind's dimensions are consecutive, in increasing order."""
    return all(g == list(range(g[0], g[0] + len(g))) for g in groups.values() if g)


def _dims(op) -> dict:
    dn = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    batch = (list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions))
    contracting = (list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions))
    return {"batch": batch, "contracting": contracting}


def _in_lhs_order(pairs: tuple[list[int], list[int]]) -> tuple[list[int], list[int]]:
    """Contracting pairs sorted by their lhs dimension (only the pairing matters; batch
    dimensions keep their order, which is the result's)."""
    order = sorted(range(len(pairs[0])), key=lambda i: pairs[0][i])
    return [pairs[0][i] for i in order], [pairs[1][i] for i in order]


def _eligible(op) -> bool:
    if not static_dot(op):
        return False
    dims = _dims(op)
    if any(len(g) > 1 for pair in dims.values() for g in pair):
        return True
    lhs, rhs = (ir.RankedTensorType(v.type).rank for v in op.operands)
    return (lhs - len(dims["batch"][0]) - len(dims["contracting"][0]) > 1 or
            rhs - len(dims["batch"][1]) - len(dims["contracting"][1]) > 1)


def _collapse(value, groups: dict, canonical: list[str]):
    """`value` with each kind's dimensions as one: reshaped when they are adjacent,
    transposed into the `canonical` order of kinds first when not. Returns the new
    value and the position of each kind's dimension in it."""
    if not _adjacent(groups):
        perm = [d for kind in canonical for d in groups[kind]]
        value = irutil.transpose(value, perm)
        where = {d: i for i, d in enumerate(perm)}
        groups = {kind: [where[d] for d in g] for kind, g in groups.items()}
    t = ir.RankedTensorType(value.type)
    kinds = sorted((k for k in groups if groups[k]), key=lambda k: groups[k][0])
    value = irutil.reshape(value, [_product(t.shape, groups[k]) for k in kinds])
    return value, {k: i for i, k in enumerate(kinds)}


def _rewrite(op) -> None:
    dims = _dims(op)
    dims = {"batch": dims["batch"], "contracting": _in_lhs_order(dims["contracting"])}
    lhs, rhs = op.operands[0], op.operands[1]
    result_type = ir.RankedTensorType(op.result.type)
    attrs = {name: op.attributes[name] for name in op.attributes}

    def build():
        new_lhs, lpos = _collapse(lhs, _groups(dims, 0, ir.RankedTensorType(lhs.type).rank),
                                  ["b", "f", "c"])
        new_rhs, rpos = _collapse(rhs, _groups(dims, 1, ir.RankedTensorType(rhs.type).rank),
                                  ["b", "c", "f"])
        lt, rt = ir.RankedTensorType(new_lhs.type), ir.RankedTensorType(new_rhs.type)
        shape = [lt.shape[lpos[k]] for k in ("b", "f") if k in lpos]
        if "f" in rpos:
            shape.append(rt.shape[rpos["f"]])
        attrs["dot_dimension_numbers"] = stablehlo.DotDimensionNumbers.get(
            [lpos["b"]] if "b" in lpos else [], [rpos["b"]] if "b" in rpos else [],
            [lpos["c"]] if "c" in lpos else [], [rpos["c"]] if "c" in rpos else [])
        dot = ir.Operation.create(
            "stablehlo.dot_general", operands=[new_lhs, new_rhs], attributes=attrs,
            results=[ir.RankedTensorType.get(shape, result_type.element_type)]).result
        return irutil.reshape(dot, result_type.shape)

    irutil.replace_op(op, build)


def run(module) -> None:
    for op in [op for op in irutil.walk(module) if _eligible(op)]:
        _rewrite(op)


PASS = PythonPass(
    argument="mlxc-canonical-dot-general",
    summary="dot_general with at most one batch, free (per operand) and contracting "
            "dimension: the others collapsed into them by reshapes (transposed first "
            "when not adjacent)",
    run=run,
)
