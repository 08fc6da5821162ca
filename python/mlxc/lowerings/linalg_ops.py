"""Linear-algebra ops: stablehlo.triangular_solve, stablehlo.cholesky, and the precision
hints (`algorithm`) of stablehlo.dot_general."""

from __future__ import annotations

from .._mlir import ir
from . import lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type


@lowering("stablehlo.triangular_solve")
def triangular_solve(op) -> None:
    attrs = op.attributes
    left_side = ir.BoolAttr(attrs["left_side"]).value
    lower = ir.BoolAttr(attrs["lower"]).value
    unit_diagonal = ir.BoolAttr(attrs["unit_diagonal"]).value
    # `#stablehlo<transpose ADJOINT>` -> "ADJOINT"
    transpose = str(attrs["transpose_a"]).rstrip(">").split()[-1]
    a_shape = list(ir.RankedTensorType(op.operands[0].type).shape)
    b_shape = list(ir.RankedTensorType(op.operands[1].type).shape)
    elem = str(ir.RankedTensorType(op.operands[0].type).element_type)
    n = a_shape[-1]
    e = Emitter(a=tensor_type(a_shape, elem), b=tensor_type(b_shape, elem))
    a, b = "%a", "%b"

    # bf16/f16 running sums lose too much: substitute in f32, as XLA's expander does.
    work = "f32" if elem in ("bf16", "f16") else elem
    if work != elem:
        a = e.op("stablehlo.convert", [a], tensor_type(a_shape, work))
        b = e.op("stablehlo.convert", [b], tensor_type(b_shape, work))

    # XLA's algorithm (TriangularSolveExpander, one block): invert the triangle by
    # rows, then multiply. Results then match XLA's to the last bits or so, where a
    # substitution would differ by tens of ulps on ill-conditioned systems.
    if n == 1:
        # XLA divides directly here, which rounds differently from 1/a * b.
        x = b
        if not unit_diagonal:
            b_t = tensor_type(b_shape, work)
            a = e.op("stablehlo.broadcast_in_dim", [_maybe_conj(e, a, a_shape, work, transpose)],
                     b_t, f"broadcast_dimensions = {i64_array(range(len(a_shape)))}")
            x = e.op("stablehlo.divide", [b, a], b_t)
    else:
        x = _solve_by_inverse(e, a, b, a_shape, b_shape, work, left_side, lower,
                              transpose, unit_diagonal)
    if work != elem:
        x = e.op("stablehlo.convert", [x], tensor_type(b_shape, elem))
    e.line(f"return {x} : {tensor_type(b_shape, elem)}")
    replace_with_text(op, e.text(), ["a", "b"])


def _solve_by_inverse(e, a, b, a_shape, b_shape, work, left_side, lower, transpose,
                      unit_diagonal) -> str:
    rank = len(a_shape)
    batch = a_shape[:-2]
    n = a_shape[-1]
    a_t = tensor_type(a_shape, work)
    index_t = tensor_type(a_shape, "i32")
    rows = e.op("stablehlo.iota", [], index_t, f"iota_dimension = {rank - 2} : i64")
    cols = e.op("stablehlo.iota", [], index_t, f"iota_dimension = {rank - 1} : i64")
    zeros = e.constant(_zero(work), a_t)
    # Only A's triangle counts (the rest may hold anything, even NaN); a unit diagonal
    # is taken as ones whatever A holds there.
    side = ("GT" if lower else "LT") if unit_diagonal else ("GE" if lower else "LE")
    keep = e.op("stablehlo.compare", [rows, cols], tensor_type(a_shape, "i1"),
                f"comparison_direction = #stablehlo<comparison_direction {side}>")
    m = e.op("stablehlo.select", [keep, a, zeros], a_t)
    if unit_diagonal:
        on_diag = e.op("stablehlo.compare", [rows, cols], tensor_type(a_shape, "i1"),
                       "comparison_direction = #stablehlo<comparison_direction EQ>")
        eye = e.op("stablehlo.select", [on_diag, e.constant(_one(work), a_t), zeros], a_t)
        m = e.op("stablehlo.add", [m, eye], a_t)

    # Scale to a unit triangle, dividing each column by its diagonal entry.
    on_diag = e.op("stablehlo.compare", [rows, cols], tensor_type(a_shape, "i1"),
                   "comparison_direction = #stablehlo<comparison_direction EQ>")
    diag = _diagonal(e, m, on_diag, a_shape, work)
    by_col = e.op("stablehlo.broadcast_in_dim", [diag], a_t,
                  f"broadcast_dimensions = {i64_array(list(range(rank - 2)) + [rank - 1])}")
    scaled = e.op("stablehlo.divide", [m, by_col], a_t)

    # Row by row, [L21 L22 0] <- -[L21 L22 0] @ inv, starting from -I with +1 on the
    # first row's diagonal (the last row's when upper).
    first = 0 if lower else n - 1
    sign = e.op("stablehlo.select", [on_diag, e.constant(_minus_one(work), a_t), zeros], a_t)
    corner = e.op("stablehlo.and", [on_diag, e.op(
        "stablehlo.compare", [rows, e.constant(str(first), index_t)],
        tensor_type(a_shape, "i1"),
        "comparison_direction = #stablehlo<comparison_direction EQ>")],
        tensor_type(a_shape, "i1"))
    inv0 = e.op("stablehlo.select", [corner, e.constant(_one(work), a_t), sign], a_t)
    row_t = tensor_type(batch + [1, n], work)
    scalar = "tensor<i64>"
    e.line("%c1 = arith.constant 1 : index")
    e.line(f"%cn = arith.constant {n} : index")
    e.line(f"%clast = arith.constant {n - 1} : index")
    e.line(f"%inv = scf.for %i = %c1 to %cn step %c1 iter_args(%acc = {inv0}) -> ({a_t}) {{",
           inv=a_t, acc=a_t)
    if lower:
        e.line("%r64 = arith.index_cast %i : index to i64")
    else:
        e.line("%r = arith.subi %clast, %i : index")
        e.line("%r64 = arith.index_cast %r : index to i64")
    e.line(f"%ri = tensor.from_elements %r64 : {scalar}", ri=scalar)
    zero_i = e.constant("0", scalar)
    lead = [zero_i] * len(batch)
    row = e.op("stablehlo.dynamic_slice", [scaled, *lead, "%ri", zero_i], row_t,
               f"slice_sizes = {i64_array(batch + [1, n])}")
    update = e.op("stablehlo.negate", [_dot(e, row, "%acc", rank - 1, rank - 2, row_t, batch, n)], row_t)
    nxt = e.op("stablehlo.dynamic_update_slice", ["%acc", update, *lead, "%ri", zero_i], a_t)
    e.line(f"scf.yield {nxt} : {a_t}")
    e.line("}")
    # Undo the scaling: row r of the inverse divided by the diagonal entry r.
    by_row = e.op("stablehlo.broadcast_in_dim", [diag], a_t,
                  f"broadcast_dimensions = {i64_array(list(range(rank - 1)))}")
    inv = e.op("stablehlo.divide", ["%inv", by_row], a_t)
    inv = _maybe_conj(e, inv, a_shape, work, transpose)

    # X = op(inv) @ B, or B @ op(inv) on the right.
    transposed = transpose != "NO_TRANSPOSE"
    b_t = tensor_type(b_shape, work)
    if left_side:
        return _dot(e, inv, b, rank - 2 if transposed else rank - 1, rank - 2, b_t, batch, n)
    return _dot(e, b, inv, rank - 1, rank - 1 if transposed else rank - 2, b_t, batch, n)


def _dot(e, lhs, rhs, lhs_k, rhs_k, result_t, batch, n) -> str:
    batch_dims = list(range(len(batch)))
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = {batch_dims}, "
            f"rhs_batching_dimensions = {batch_dims}, "
            f"lhs_contracting_dimensions = [{lhs_k}], rhs_contracting_dimensions = [{rhs_k}]>")
    return e.op("stablehlo.dot_general", [lhs, rhs], result_t,
                f"dot_dimension_numbers = {dims}, "
                "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]")


def _diagonal(e, m, on_diag, a_shape, work) -> str:
    # The diagonal as a [..., n] tensor: a row sum of the matrix with everything else
    # set to -0.0, which adds nothing, even to a -0.0 or an infinity on the diagonal.
    neg_zero = "(-0.0, -0.0)" if work.startswith("complex") else "-0.0"
    scalar_t = tensor_type([], work)
    only = e.op("stablehlo.select", [on_diag, m, e.constant(neg_zero, tensor_type(a_shape, work))],
                tensor_type(a_shape, work))
    init = e.constant(neg_zero, scalar_t)
    out_t = tensor_type(a_shape[:-1], work)
    value = e.fresh()
    e.line(f'{value} = "stablehlo.reduce"({only}, {init}) ({{\n'
           f"^bb0(%ra: {scalar_t}, %rb: {scalar_t}):\n"
           f'  %rs = "stablehlo.add"(%ra, %rb) : ({scalar_t}, {scalar_t}) -> {scalar_t}\n'
           f'  "stablehlo.return"(%rs) : ({scalar_t}) -> ()\n'
           f"}}) {{dimensions = array<i64: {len(a_shape) - 1}>}} : "
           f"({tensor_type(a_shape, work)}, {scalar_t}) -> {out_t}")
    e.types[value] = out_t
    return value


def _maybe_conj(e, x, shape, work, transpose) -> str:
    if transpose != "ADJOINT" or not work.startswith("complex"):
        return x
    part_t = tensor_type(shape, work[len("complex<"):-1])
    re = e.op("stablehlo.real", [x], part_t)
    im = e.op("stablehlo.negate", [e.op("stablehlo.imag", [x], part_t)], part_t)
    return e.op("stablehlo.complex", [re, im], tensor_type(shape, work))


def _zero(elem: str) -> str:
    return "(0.0, 0.0)" if elem.startswith("complex") else "0.0"


def _one(elem: str) -> str:
    return "(1.0, 0.0)" if elem.startswith("complex") else "1.0"


def _minus_one(elem: str) -> str:
    return "(-1.0, 0.0)" if elem.startswith("complex") else "-1.0"


@lowering("stablehlo.dot_general")
def dot_algorithm(op) -> None:
    # An `algorithm` asks for at least a given precision (tf32 or bf16 passes, f32
    # accumulation). Upstream refuses any dot that names one; mlxc computes every dot
    # in its operand type or wider, with f32 accumulation for bf16/f16, which meets
    # every algorithm's precision, so the request is dropped.
    if "algorithm" in op.attributes:
        del op.attributes["algorithm"]


@lowering("stablehlo.cholesky")
def cholesky(op) -> None:
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    lower = "lower" in op.attributes and ir.BoolAttr(op.attributes["lower"]).value
    rank, n = len(shape), shape[-1]
    batch = shape[:-2]
    e = Emitter(a=tensor_type(shape, elem))
    work = "f32" if elem in ("bf16", "f16") else elem
    a_t = tensor_type(shape, work)
    m = "%a" if work == elem else e.op("stablehlo.convert", ["%a"], a_t)
    swap = i64_array(list(range(rank - 2)) + [rank - 1, rank - 2])
    # Upper: A = U^H U is the lower factorization of A^H, read from A's upper triangle.
    if not lower:
        m = _maybe_conj(e, e.op("stablehlo.transpose", [m], a_t, f"permutation = {swap}"),
                        shape, work, "ADJOINT")

    # Column by column, as XLA's unblocked algorithm:
    #   L[j, j] = sqrt(A[j, j] - L[j, :j] . conj(L[j, :j]))
    #   L[j+1:, j] = (A[j+1:, j] - L[j+1:, :j] . conj(L[j, :j])) / L[j, j]
    # Columns not yet computed are zero, so whole-row products sum over k < j only.
    col_t = tensor_type(batch + [n, 1], work)
    row_t = tensor_type(batch + [1, n], work)
    one_t = tensor_type(batch + [1, 1], work)
    scalar = "tensor<i64>"
    rows = e.op("stablehlo.iota", [], tensor_type(batch + [n, 1], "i64"),
                f"iota_dimension = {rank - 2} : i64")
    l0 = e.constant(_zero(work), a_t)
    e.line("%c0 = arith.constant 0 : index")
    e.line("%c1 = arith.constant 1 : index")
    e.line(f"%cn = arith.constant {n} : index")
    e.line(f"%l = scf.for %j = %c0 to %cn step %c1 iter_args(%acc = {l0}) -> ({a_t}) {{",
           l=a_t, acc=a_t)
    e.line("%j64 = arith.index_cast %j : index to i64")
    e.line(f"%ji = tensor.from_elements %j64 : {scalar}", ji=scalar)
    zero_i = e.constant("0", scalar)
    lead = [zero_i] * len(batch)
    column = e.op("stablehlo.dynamic_slice", [m, *lead, zero_i, "%ji"], col_t,
                  f"slice_sizes = {i64_array(batch + [n, 1])}")
    row = _maybe_conj(e, e.op("stablehlo.dynamic_slice", ["%acc", *lead, "%ji", zero_i], row_t,
                              f"slice_sizes = {i64_array(batch + [1, n])}"),
                      batch + [1, n], work, "ADJOINT")
    known = _dot(e, "%acc", row, rank - 1, rank - 1, col_t, batch, n)
    rest = e.op("stablehlo.subtract", [column, known], col_t)
    pivot = e.op("stablehlo.dynamic_slice", [rest, *lead, "%ji", zero_i], one_t,
                 f"slice_sizes = {i64_array(batch + [1, 1])}")
    if work.startswith("complex"):
        # The pivot of a Hermitian matrix is real; its imaginary part is rounding.
        part_t = tensor_type(batch + [1, 1], work[len("complex<"):-1])
        root = e.op("stablehlo.sqrt", [e.op("stablehlo.real", [pivot], part_t)], part_t)
        pivot = e.op("stablehlo.complex", [root, e.constant("0.0", part_t)], one_t)
    else:
        pivot = e.op("stablehlo.sqrt", [pivot], one_t)
    scaled = e.op("stablehlo.divide", [rest, e.op(
        "stablehlo.broadcast_in_dim", [pivot], col_t,
        f"broadcast_dimensions = {i64_array(range(rank))}")], col_t)
    # Rows above the diagonal stay zero; the diagonal itself is the root (the division
    # above would round it).
    j_col = e.op("stablehlo.broadcast_in_dim", ["%ji"], tensor_type(batch + [n, 1], "i64"),
                 "broadcast_dimensions = array<i64>")
    below = e.op("stablehlo.compare", [rows, j_col], tensor_type(batch + [n, 1], "i1"),
                 "comparison_direction = #stablehlo<comparison_direction GT>")
    at = e.op("stablehlo.compare", [rows, j_col], tensor_type(batch + [n, 1], "i1"),
              "comparison_direction = #stablehlo<comparison_direction EQ>")
    pivots = e.op("stablehlo.broadcast_in_dim", [pivot], col_t,
                  f"broadcast_dimensions = {i64_array(range(rank))}")
    zeros = e.constant(_zero(work), col_t)
    new_col = e.op("stablehlo.select", [below, scaled, e.op("stablehlo.select", [at, pivots, zeros],
                                                            col_t)], col_t)
    nxt = e.op("stablehlo.dynamic_update_slice", ["%acc", new_col, *lead, zero_i, "%ji"], a_t)
    e.line(f"scf.yield {nxt} : {a_t}")
    e.line("}")
    result = "%l"
    if not lower:
        result = _maybe_conj(e, e.op("stablehlo.transpose", [result], a_t,
                                     f"permutation = {swap}"), shape, work, "ADJOINT")
    if work != elem:
        result = e.op("stablehlo.convert", [result], tensor_type(shape, elem))
    e.line(f"return {result} : {tensor_type(shape, elem)}")
    replace_with_text(op, e.text(), ["a"])
