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

Which operand is the lhs is chosen too, as XLA chooses a dot's output layout: the
product computes `[b.., m.., n..]` or, swapped, `[b.., n.., m..]`, and when its one user
is a transpose the two transposes fold into one. Each way is costed by the elements its
transposes move, one that moves the innermost dimension (an element-by-element shuffle,
8x8 register tiles and a fifth of a decoder layer's LLVM time) costing four times one
that copies whole rows, and the cheaper way is built: attention's `p @ v` written as
`einsum('bhqk,bkhd->bqhd')` computes `[b, h, q, d]` from p and v moved by rows, where
`[b, h, d, q]` needed v and p transposed and the result transposed back, all three
shuffles.
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


_ROW_COPY = 1  # cost per element of a transpose that keeps the innermost dimension
_SHUFFLE = 4   # one that moves it


def _transpose_cost(shape, perm) -> int:
    if list(perm) == list(range(len(perm))):
        return 0
    return _product(shape, range(len(shape))) * (
        _ROW_COPY if perm[-1] == len(perm) - 1 else _SHUFFLE)


def _operand_perm(value, groups: dict, side: int) -> list[int]:
    """Where `value`'s kinds are not adjacent: the permutation into [b, f, c] (lhs)
    or [b, c, f] (rhs); the identity otherwise."""
    rank = ir.RankedTensorType(value.type).rank
    if _adjacent(groups):
        return list(range(rank))
    return [d for kind in (("b", "f", "c") if side == 0 else ("b", "c", "f"))
            for d in groups[kind]]


def _collapse(value, groups: dict, perm: list[int]):
    """`value` transposed by `perm`, then each kind's dimensions reshaped into one.
    Returns the new value and the position of each kind's dimension in it."""
    if perm != list(range(len(perm))):
        value = irutil.transpose(value, perm)
        where = {d: i for i, d in enumerate(perm)}
        groups = {kind: [where[d] for d in g] for kind, g in groups.items()}
    t = ir.RankedTensorType(value.type)
    kinds = sorted((k for k in groups if groups[k]), key=lambda k: groups[k][0])
    value = irutil.reshape(value, [_product(t.shape, groups[k]) for k in kinds])
    return value, {k: i for i, k in enumerate(kinds)}


def _one_transpose_user(op):
    uses = list(op.result.uses)
    if len(uses) == 1 and uses[0].owner.name == "stablehlo.transpose":
        return uses[0].owner
    return None


class _Way:
    """One way to build the product: operands in order, their dimension groups and
    transposes, and the permutation from what it computes to `[b.., m.., n..]`."""

    def __init__(self, op, swap: bool):
        dims = _dims(op)
        lhs, rhs = op.operands[0], op.operands[1]
        batch, contracting = dims["batch"], dims["contracting"]
        if swap:
            lhs, rhs = rhs, lhs
            batch, contracting = batch[::-1], contracting[::-1]
        dims = {"batch": batch, "contracting": _in_lhs_order(contracting)}
        self.operands = [lhs, rhs]
        self.swap = swap
        self.groups = [_groups(dims, side, ir.RankedTensorType(v.type).rank)
                       for side, v in enumerate(self.operands)]
        shapes = [list(ir.RankedTensorType(v.type).shape) for v in self.operands]
        self.perms = [_operand_perm(v, g, side)
                      for side, (v, g) in enumerate(zip(self.operands, self.groups))]
        out = list(ir.RankedTensorType(op.result.type).shape)
        nb = len(batch[0])
        nm = len(self.groups[1]["f"]) if swap else len(self.groups[0]["f"])
        nn = len(out) - nb - nm
        if swap:  # computes [b.., n.., m..]
            self.shape = out[:nb] + out[nb + nm:] + out[nb:nb + nm]
            self.back = list(range(nb)) + [nb + nn + i for i in range(nm)] + \
                [nb + i for i in range(nn)]
        else:
            self.shape, self.back = out, list(range(len(out)))
        self.cost = sum(_transpose_cost(sh, p) for sh, p in zip(shapes, self.perms))
        user = _one_transpose_user(op)
        if user is not None:  # the user's transpose, folded with `back`
            user_perm = list(ir.DenseI64ArrayAttr(user.attributes["permutation"]))
            self.cost += _transpose_cost(self.shape, [self.back[p] for p in user_perm])
        else:
            self.cost += _transpose_cost(self.shape, self.back)

    def build(self, op, attrs: dict):
        result_type = ir.RankedTensorType(op.result.type)
        new_lhs, lpos = _collapse(self.operands[0], self.groups[0], self.perms[0])
        new_rhs, rpos = _collapse(self.operands[1], self.groups[1], self.perms[1])
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
        return irutil.transpose(irutil.reshape(dot, self.shape), self.back)


def _rewrite(op) -> None:
    way = _Way(op, False)
    if _one_transpose_user(op) is not None and "algorithm" not in op.attributes:
        # (An algorithm names the lhs's and the rhs's precisions: not swapped.)
        swapped = _Way(op, True)
        if swapped.cost < way.cost:
            way = swapped
    attrs = {name: op.attributes[name] for name in op.attributes}
    if way.swap and "precision_config" in attrs:  # one per operand: they follow them
        attrs["precision_config"] = ir.ArrayAttr.get(
            list(ir.ArrayAttr(attrs["precision_config"]))[::-1])
    irutil.replace_op(op, lambda: way.build(op, attrs))


def run(module) -> None:
    for op in [op for op in irutil.walk(module) if _eligible(op)]:
        _rewrite(op)


PASS = PythonPass(
    argument="mlxc-canonical-dot-general",
    summary="dot_general with at most one batch, free (per operand) and contracting "
            "dimension: the others collapsed into them by reshapes (transposed first "
            "when not adjacent, the operands swapped when that moves fewer elements)",
    run=run,
)
