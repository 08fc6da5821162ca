"""JAX's CPU linear algebra: `stablehlo.custom_call @lapack_*_ffi`.

On CPU, `jax.export` of jnp.linalg functions calls LAPACK through XLA's FFI:
`lapack_spotrf_ffi` (Cholesky), `lapack_strsm_ffi` (triangular solve),
`lapack_sgetrf_ffi` (LU with partial pivoting), with s/d/c/z for f32/f64/c64/c128.
Options come as `backend_config` characters (uplo = 'L', side = 'R', ...), as LAPACK
takes them. The `operand_layouts`/`result_layouts` are column-major only because
LAPACK is Fortran: XLA transposes the data on the way in and out, so the op's
meaning, which we follow, is on the logical (row-major) shapes. Leading dimensions
are batch dimensions.

Any other custom call is left alone for the stage contract to report; a LAPACK
target we do not know is refused here, by name.
"""

from __future__ import annotations

from .._mlir import ir
from ..errors import CompileError
from . import linalg_ops, lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type

_ELEM = {"s": "f32", "d": "f64", "c": "complex<f32>", "z": "complex<f64>"}


@lowering("stablehlo.custom_call")
def custom_call(op) -> None:
    target = ir.StringAttr(op.attributes["call_target_name"]).value
    if not target.startswith("lapack_"):
        return
    routine = target[len("lapack_"):]
    if routine.endswith("_ffi"):
        routine = routine[:-len("_ffi")]
    rule = _ROUTINES.get(routine[1:]) if routine[:1] in _ELEM else None
    if rule is None:
        known = ", ".join(f"lapack_?{r}_ffi" for r in sorted(_ROUTINES))
        raise CompileError.at(op, f"mlxc cannot lower custom_call @{target} "
                                  f"(LAPACK routines mlxc lowers: {known})")
    if not target.endswith("_ffi"):
        # The pre-FFI calls pass sizes and options as operands, in another order.
        raise CompileError.at(op, f"mlxc cannot lower custom_call @{target}: only the "
                                  "FFI form (@{target}_ffi, jaxlib 0.4.31 and later) is supported")
    rule(op, _config(op))


def _config(op) -> dict[str, str]:
    """backend_config as characters: {uplo = 76 : ui8} -> {"uplo": "L"}."""
    # `mhlo.backend_config` as JAX writes it; `backend_config` once the import stage
    # has upgraded the call to api_version 4.
    names = [n for n in ("backend_config", "mhlo.backend_config") if n in op.attributes]
    if not names:
        return {}
    attr = op.attributes[names[0]]
    if not isinstance(attr, ir.DictAttr):
        try:
            attr = ir.DictAttr(attr)
        except ValueError:
            return {}
    out = {}
    for i in range(len(attr)):
        named = attr[i]
        value = named.attr
        if isinstance(value, ir.IntegerAttr) or ir.IntegerAttr.isinstance(value):
            out[named.name] = chr(ir.IntegerAttr(value).value & 0xFF)
    return out


def _option(op, config: dict, key: str, allowed: str, default: str) -> str:
    value = config.get(key, default)
    if value not in allowed:
        raise CompileError.at(op, f"custom_call @{ir.StringAttr(op.attributes['call_target_name']).value}: "
                                  f"{key} = '{value}' is not one of {', '.join(allowed)}")
    return value


def potrf(op, config: dict) -> None:
    """Cholesky factor in the `uplo` triangle; the other triangle keeps A's entries, as
    LAPACK leaves them. `info` is 0, or the 1-based column whose pivot is not positive."""
    lower = _option(op, config, "uplo", "LU", "L") == "L"
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    rank, n = len(shape), shape[-1]
    batch = shape[:-2]
    a_t = tensor_type(shape, elem)
    e = Emitter(a=a_t)
    factor = e.op("stablehlo.cholesky", ["%a"], a_t, f"lower = {str(lower).lower()}")
    rows = e.op("stablehlo.iota", [], tensor_type(shape, "i32"), f"iota_dimension = {rank - 2} : i64")
    cols = e.op("stablehlo.iota", [], tensor_type(shape, "i32"), f"iota_dimension = {rank - 1} : i64")
    keep = e.op("stablehlo.compare", [rows, cols], tensor_type(shape, "i1"),
                f"comparison_direction = #stablehlo<comparison_direction {'GE' if lower else 'LE'}>")
    result = e.op("stablehlo.select", [keep, factor, "%a"], a_t)

    # A pivot that is not positive (or NaN) leaves a zero, negative or NaN diagonal entry.
    on_diag = e.op("stablehlo.compare", [rows, cols], tensor_type(shape, "i1"),
                   "comparison_direction = #stablehlo<comparison_direction EQ>")
    diag = linalg_ops._diagonal(e, factor, on_diag, shape, elem)
    part = _real_type(elem)
    vec_t, info_t = tensor_type(batch + [n], "i32"), tensor_type(batch, "i32")
    if elem != part:
        diag = e.op("stablehlo.real", [diag], tensor_type(batch + [n], part))
    good = e.op("stablehlo.compare", [diag, e.constant("0.0", tensor_type(batch + [n], part))],
                tensor_type(batch + [n], "i1"),
                "comparison_direction = #stablehlo<comparison_direction GT>")
    column = e.op("stablehlo.add", [
        e.op("stablehlo.iota", [], vec_t, f"iota_dimension = {rank - 2} : i64"),
        e.constant("1", vec_t)], vec_t)
    failed = _reduce(e, e.op("stablehlo.select", [good, e.constant(str(n + 1), vec_t), column], vec_t),
                     [rank - 2], info_t, "i32", "stablehlo.minimum", str(n + 1))
    none = e.op("stablehlo.compare", [failed, e.constant(str(n + 1), info_t)],
                tensor_type(batch, "i1"), "comparison_direction = #stablehlo<comparison_direction EQ>")
    info = e.op("stablehlo.select", [none, e.constant("0", info_t), failed], info_t)
    e.line(f"return {result}, {info} : {a_t}, {info_t}")
    _replace(op, e, ["a"])


def _replace(op, e: Emitter, arg_names) -> None:
    """replace_with_text, then lower the StableHLO ops of linalg_ops that the text
    uses: the pass that called us has already listed the ops it will visit."""
    block = op.operation.block
    ops = block.operations
    index = next(i for i in range(len(ops)) if ops[i] == op.operation)
    before = len(ops)
    replace_with_text(op, e.text(), arg_names)
    ops = block.operations
    added = [ops[i] for i in range(index, index + len(ops) - before + 1)]
    for new in added:
        if new.name == "stablehlo.cholesky":
            linalg_ops.cholesky(new)
        elif new.name == "stablehlo.triangular_solve":
            linalg_ops.triangular_solve(new)


def trsm(op, config: dict) -> None:
    """op(A) X = B (side L) or X op(A) = B (side R), A triangular: a
    stablehlo.triangular_solve, lowered by linalg_ops."""
    side = _option(op, config, "side", "LR", "L")
    uplo = _option(op, config, "uplo", "LU", "L")
    trans = _option(op, config, "trans_x", "NTC", "N")
    diag = _option(op, config, "diag", "UN", "N")
    if len(op.operands) != 2:
        raise CompileError.at(op, "custom_call @lapack_?trsm_ffi: expected the operands (A, B), "
                                  f"got {len(op.operands)}")
    transpose = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[trans]
    a_t, b_t = str(op.operands[0].type), str(op.operands[1].type)
    e = Emitter(a=a_t, b=b_t)
    x = e.op("stablehlo.triangular_solve", ["%a", "%b"], b_t,
             f"left_side = {str(side == 'L').lower()}, lower = {str(uplo == 'L').lower()}, "
             f"unit_diagonal = {str(diag == 'U').lower()}, "
             f"transpose_a = #stablehlo<transpose {transpose}>")
    e.line(f"return {x} : {b_t}")
    _replace(op, e, ["a", "b"])


def getrf(op, config: dict) -> None:
    """LU with partial pivoting, as LAPACK's getrf: P A = L U with L unit lower (below
    the diagonal of the first result) and U upper; pivots are 1-based rows (row k was
    swapped with row ipiv[k]); `info` is 0, or the first 1-based k with U[k, k] == 0,
    in which case the factorization still completes."""
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    rank, m, n = len(shape), shape[-2], shape[-1]
    batch = shape[:-2]
    steps = min(m, n)
    part = _real_type(elem)
    a_t, piv_t, info_t = tensor_type(shape, elem), tensor_type(batch + [steps], "i32"), tensor_type(batch, "i32")
    col_t, row_t = tensor_type(batch + [m, 1], elem), tensor_type(batch + [1, n], elem)
    meas_t, bool_t = tensor_type(batch + [m, 1], part), tensor_type(shape, "i1")
    idx_t, b64_t = tensor_type(shape, "i64"), tensor_type(batch, "i64")
    lead_dims = list(range(len(batch)))
    e = Emitter(a=a_t)
    scalar = "tensor<i64>"
    rows = e.op("stablehlo.iota", [], idx_t, f"iota_dimension = {rank - 2} : i64")
    cols = e.op("stablehlo.iota", [], idx_t, f"iota_dimension = {rank - 1} : i64")
    col_rows = e.op("stablehlo.iota", [], tensor_type(batch + [m, 1], "i64"),
                    f"iota_dimension = {rank - 2} : i64")
    piv0 = e.constant("0", piv_t)
    info0 = e.constant("0", info_t)
    zero_i = e.constant("0", scalar)
    lead = [zero_i] * len(batch)

    def cmp(x, y, direction, result):
        return e.op("stablehlo.compare", [x, y], result,
                    f"comparison_direction = #stablehlo<comparison_direction {direction}>")

    def bcast(x, result, dims):
        return e.op("stablehlo.broadcast_in_dim", [x], result, f"broadcast_dimensions = {i64_array(dims)}")

    e.line("%c0 = arith.constant 0 : index")
    e.line("%c1 = arith.constant 1 : index")
    e.line(f"%csteps = arith.constant {steps} : index")
    e.line(f"%lu:3 = scf.for %k = %c0 to %csteps step %c1 "
           f"iter_args(%acc = %a, %pacc = {piv0}, %iacc = {info0}) -> ({a_t}, {piv_t}, {info_t}) {{",
           acc=a_t, pacc=piv_t, iacc=info_t)
    e.line("%k64 = arith.index_cast %k : index to i64")
    e.line(f"%ki = tensor.from_elements %k64 : {scalar}", ki=scalar)

    # The pivot: the first row at or below k whose entry in column k is largest, by
    # |x| (|re| + |im| for complex, as LAPACK's i?amax).
    column = e.op("stablehlo.dynamic_slice", ["%acc", *lead, zero_i, "%ki"], col_t,
                  f"slice_sizes = {i64_array(batch + [m, 1])}")
    if elem == part:
        size = e.op("stablehlo.abs", [column], meas_t)
    else:
        size = e.op("stablehlo.add", [e.op("stablehlo.abs", [e.op("stablehlo.real", [column], meas_t)], meas_t),
                                      e.op("stablehlo.abs", [e.op("stablehlo.imag", [column], meas_t)], meas_t)],
                    meas_t)
    k_col = bcast("%ki", tensor_type(batch + [m, 1], "i64"), [])
    eligible = cmp(col_rows, k_col, "GE", tensor_type(batch + [m, 1], "i1"))
    size = e.op("stablehlo.select", [eligible, size, e.constant("-1.0", meas_t)], meas_t)
    largest = _reduce(e, size, [rank - 2, rank - 1], tensor_type(batch, part), part,
                      "stablehlo.maximum", "0xFF800000" if part == "f32" else "0xFFF0000000000000")
    hit = e.op("stablehlo.and", [eligible, cmp(size, bcast(largest, meas_t, lead_dims), "EQ",
                                               tensor_type(batch + [m, 1], "i1"))],
               tensor_type(batch + [m, 1], "i1"))
    first = _reduce(e, e.op("stablehlo.select", [hit, col_rows, e.constant(str(m), tensor_type(batch + [m, 1], "i64"))],
                            tensor_type(batch + [m, 1], "i64")),
                    [rank - 2, rank - 1], b64_t, "i64", "stablehlo.minimum", str(m))
    k_b = bcast("%ki", b64_t, [])
    # A NaN column matches nothing: keep row k, as i?amax does when nothing beats it.
    p = e.op("stablehlo.select", [cmp(first, e.constant(str(m), b64_t), "EQ", tensor_type(batch, "i1")),
                                  k_b, first], b64_t)

    # Swap rows k and p (p differs per batch member: select the row rather than slice).
    is_k = cmp(rows, bcast("%ki", idx_t, []), "EQ", bool_t)
    is_p = cmp(rows, bcast(p, idx_t, lead_dims), "EQ", bool_t)
    row_k = bcast(e.op("stablehlo.dynamic_slice", ["%acc", *lead, "%ki", zero_i], row_t,
                       f"slice_sizes = {i64_array(batch + [1, n])}"), a_t, list(range(rank)))
    neg_zero = "(-0.0, -0.0)" if elem != part else "-0.0"
    only_p = e.op("stablehlo.select", [is_p, "%acc", e.constant(neg_zero, a_t)], a_t)
    row_p = _reduce(e, only_p, [rank - 2], tensor_type(batch + [n], elem), elem, "stablehlo.add", neg_zero)
    row_p = bcast(row_p, a_t, lead_dims + [rank - 1])
    swapped = e.op("stablehlo.select", [is_k, row_p, e.op("stablehlo.select", [is_p, row_k, "%acc"], a_t)], a_t)

    # Eliminate below the pivot: L's column is column k over the pivot (left as it is
    # when the pivot is zero: the column is then zero), then a rank-1 update.
    pivot = bcast(e.op("stablehlo.dynamic_slice", [swapped, *lead, "%ki", "%ki"], tensor_type(batch + [1, 1], elem),
                       f"slice_sizes = {i64_array(batch + [1, 1])}"), a_t, list(range(rank)))
    singular = cmp(largest, e.constant("0.0", tensor_type(batch, part)), "EQ", tensor_type(batch, "i1"))
    column = bcast(e.op("stablehlo.dynamic_slice", [swapped, *lead, zero_i, "%ki"], col_t,
                        f"slice_sizes = {i64_array(batch + [m, 1])}"), a_t, list(range(rank)))
    scaled = e.op("stablehlo.select", [bcast(singular, bool_t, lead_dims), column,
                                       e.op("stablehlo.divide", [column, pivot], a_t)], a_t)
    k_full = bcast("%ki", idx_t, [])
    below = cmp(rows, k_full, "GT", bool_t)
    right = cmp(cols, k_full, "GT", bool_t)
    at_k = cmp(cols, k_full, "EQ", bool_t)
    updated = e.op("stablehlo.subtract", [swapped, e.op("stablehlo.multiply", [scaled, row_p], a_t)], a_t)
    nxt = e.op("stablehlo.select", [e.op("stablehlo.and", [below, right], bool_t), updated,
                                    e.op("stablehlo.select", [e.op("stablehlo.and", [below, at_k], bool_t),
                                                              scaled, swapped], a_t)], a_t)

    one_t = tensor_type(batch + [1], "i32")
    p1 = e.op("stablehlo.add", [e.op("stablehlo.reshape", [e.op("stablehlo.convert", [p], info_t)], one_t),
                                e.constant("1", one_t)], one_t)
    pivots = e.op("stablehlo.dynamic_update_slice", ["%pacc", p1, *lead, "%ki"], piv_t)
    first_zero = e.op("stablehlo.and", [singular, cmp("%iacc", e.constant("0", info_t), "EQ",
                                                      tensor_type(batch, "i1"))], tensor_type(batch, "i1"))
    k1 = e.op("stablehlo.add", [e.op("stablehlo.convert", [k_b], info_t), e.constant("1", info_t)], info_t)
    info = e.op("stablehlo.select", [first_zero, k1, "%iacc"], info_t)
    e.line(f"scf.yield {nxt}, {pivots}, {info} : {a_t}, {piv_t}, {info_t}")
    e.line("}")
    e.line(f"return %lu#0, %lu#1, %lu#2 : {a_t}, {piv_t}, {info_t}")
    _replace(op, e, ["a"])


_ROUTINES = {"potrf": potrf, "trsm": trsm, "getrf": getrf}


def _real_type(elem: str) -> str:
    return elem[len("complex<"):-1] if elem.startswith("complex") else elem


def _reduce(e: Emitter, x: str, dims, result: str, elem: str, body: str, init: str) -> str:
    scalar = tensor_type([], elem)
    start = e.constant(init, scalar)
    value = e.fresh()
    e.line(f'{value} = "stablehlo.reduce"({x}, {start}) ({{\n'
           f"^bb0(%ra: {scalar}, %rb: {scalar}):\n"
           f'  %rr = "{body}"(%ra, %rb) : ({scalar}, {scalar}) -> {scalar}\n'
           f'  "stablehlo.return"(%rr) : ({scalar}) -> ()\n'
           f"}}) {{dimensions = {i64_array(dims)}}} : ({e.types[x]}, {scalar}) -> {result}")
    e.types[value] = result
    return value
