"""JAX's CPU linear algebra: `stablehlo.custom_call @lapack_*_ffi`.

On CPU, `jax.export` of jnp.linalg functions calls LAPACK through XLA's FFI:
`lapack_spotrf_ffi` (Cholesky), `lapack_strsm_ffi` (triangular solve),
`lapack_sgetrf_ffi` (LU with partial pivoting), `lapack_sgeqrf_ffi` and
`lapack_sorgqr_ffi` (Householder QR and its Q), `lapack_ssyevd_ffi` (symmetric
eigendecomposition), `lapack_sgesdd_ffi` (SVD), with s/d/c/z for f32/f64/c64/c128.
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
from .sort import sort as sort_rule
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
        raise CompileError.at(op, f"mlxc cannot lower custom_call @{target} (LAPACK routines mlxc "
                                  "lowers: ?potrf, ?trsm, ?getrf, ?geqrf, ?orgqr/?ungqr, ?syevd/?heevd, ?gesdd, "
                                  "?gehrd, ?sytrd/?hetrd, ?gees, ?geev)")
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
        elif new.name == "stablehlo.sort":
            sort_rule(new)
        elif new.name == "stablehlo.custom_call":
            custom_call(new)


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


class _Matrix:
    """Shapes and small emitters shared by the rules over [..., m, n] tensors."""

    def __init__(self, e: Emitter, shape, elem: str):
        self.e, self.shape, self.elem = e, list(shape), elem
        self.batch, self.rank = self.shape[:-2], len(self.shape)
        self.m, self.n = self.shape[-2], self.shape[-1]
        self.t = tensor_type(self.shape, elem)
        self.zero_i = e.constant("0", "tensor<i64>")
        self.lead = [self.zero_i] * len(self.batch)

    def type(self, rows: int, cols: int, elem: str | None = None) -> str:
        return tensor_type(self.batch + [rows, cols], elem or self.elem)

    def iota(self, dim: int, rows: int, cols: int) -> str:
        return self.e.op("stablehlo.iota", [], self.type(rows, cols, "i64"),
                         f"iota_dimension = {self.rank - 2 + dim} : i64")

    def cmp(self, x: str, y: str, direction: str) -> str:
        result = self.e.types[x].rsplit("x", 1)[0] + "xi1>" if "x" in self.e.types[x] else "tensor<i1>"
        return self.e.op("stablehlo.compare", [x, y], result,
                         f"comparison_direction = #stablehlo<comparison_direction {direction}>")

    def bcast(self, x: str, result: str, dims) -> str:
        return self.e.op("stablehlo.broadcast_in_dim", [x], result, f"broadcast_dimensions = {i64_array(dims)}")

    def full(self, x: str, result: str) -> str:
        """Broadcast a [..., 1 or r, 1 or c] tensor to `result`."""
        return self.bcast(x, result, range(self.rank))

    def scalar_at(self, i: str, rows: int, cols: int) -> str:
        return self.bcast(i, self.type(rows, cols, "i64"), [])

    def sum_rows(self, x: str, rows: int, cols: int, elem: str | None = None) -> str:
        """Sum over the row dimension, keeping it (size 1)."""
        elem = elem or self.elem
        total = _reduce(self.e, x, [self.rank - 2], tensor_type(self.batch + [cols], elem),
                        elem, "stablehlo.add", "(0.0, 0.0)" if "complex" in elem else "0.0")
        return self.e.op("stablehlo.reshape", [total], self.type(1, cols, elem))

    def slice(self, x: str, row: str, col: str, rows: int, cols: int) -> str:
        return self.e.op("stablehlo.dynamic_slice", [x, *self.lead, row, col], self.type(rows, cols),
                         f"slice_sizes = {i64_array(self.batch + [rows, cols])}")


def _loop_header(e: Emitter, count: int, carried: list[tuple[str, str, str]], down: bool = False) -> None:
    """Open `%loop:N = scf.for %i` over 0..count (or count-1..0 when `down`), carrying
    (name, initial value, type); defines %ki, the step's index as tensor<i64>."""
    e.line("%c0 = arith.constant 0 : index")
    e.line("%c1 = arith.constant 1 : index")
    e.line(f"%ccount = arith.constant {count} : index")
    args = ", ".join(f"%{name} = {init}" for name, init, _ in carried)
    types = ", ".join(t for _, _, t in carried)
    e.line(f"%loop:{len(carried)} = scf.for %i = %c0 to %ccount step %c1 iter_args({args}) -> ({types}) {{",
           **{name: t for name, _, t in carried})
    if down:
        e.line(f"%clast = arith.constant {count - 1} : index")
        e.line("%k = arith.subi %clast, %i : index")
    else:
        e.line("%k = arith.addi %i, %c0 : index")
    e.line("%k64 = arith.index_cast %k : index to i64")
    e.line("%ki = tensor.from_elements %k64 : tensor<i64>", ki="tensor<i64>")


def _real_only(op, routine: str, elem: str) -> None:
    if elem.startswith("complex"):
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        raise CompileError.at(op, f"mlxc cannot lower custom_call @{target}: complex {routine} "
                                  "is not supported yet (real types only)")


def geqrf(op, config: dict) -> None:
    """Householder QR, as LAPACK's geqr2: R on and above the diagonal, each reflector's
    vector v (v[k] = 1 implied) below it, and tau, with H_k = I - tau_k v v^H; A is
    reduced by H_k^H (the same as H_k when real)."""
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    part = _real_type(elem)
    cplx = part != elem
    e = Emitter(a=tensor_type(shape, elem))
    x = _Matrix(e, shape, elem)
    m, n, steps = x.m, x.n, min(x.m, x.n)
    tau_t = tensor_type(x.batch + [steps], elem)
    one_t, one_r = x.type(1, 1), x.type(1, 1, part)
    col_t, col_r = x.type(m, 1), x.type(m, 1, part)
    zero_c = "(0.0, 0.0)" if cplx else "0.0"
    one_c = "(1.0, 0.0)" if cplx else "1.0"
    rows = x.iota(0, m, 1)
    all_cols = x.iota(1, m, n)
    _loop_header(e, steps, [("acc", "%a", x.t), ("taus", e.constant(zero_c, tau_t), tau_t)])
    k_col = x.scalar_at("%ki", m, 1)
    below = x.cmp(rows, k_col, "GT")
    at = x.cmp(rows, k_col, "EQ")
    column = x.slice("%acc", x.zero_i, "%ki", m, 1)
    zeros = e.constant(zero_c, col_t)
    tail = e.op("stablehlo.select", [below, column, zeros], col_t)
    alpha = x.slice("%acc", "%ki", "%ki", 1, 1)

    def r(name, *args, t=one_r):
        return e.op(f"stablehlo.{name}", list(args), t)

    if cplx:
        sq_parts = r("add", r("multiply", r("real", tail, t=col_r), r("real", tail, t=col_r), t=col_r),
                     r("multiply", r("imag", tail, t=col_r), r("imag", tail, t=col_r), t=col_r), t=col_r)
        alphr, alphi = r("real", alpha), r("imag", alpha)
    else:
        sq_parts, alphr, alphi = r("multiply", tail, tail, t=col_r), alpha, None
    sq = x.sum_rows(sq_parts, m, 1, part)
    norm2 = r("add", r("multiply", alphr, alphr), sq)
    if cplx:
        norm2 = r("add", norm2, r("multiply", alphi, alphi))
    norm = r("sqrt", norm2)
    # beta = -sign(Re alpha) * ||(alpha, x)||; no reflection (tau = 0) when x is zero
    # (and alpha real).
    beta = e.op("stablehlo.select", [x.cmp(alphr, e.constant("0.0", one_r), "LT"), norm, r("negate", norm)], one_r)
    identity = x.cmp(sq, e.constant("0.0", one_r), "EQ")
    if cplx:
        identity = e.op("stablehlo.and", [identity, x.cmp(alphi, e.constant("0.0", one_r), "EQ")],
                        x.type(1, 1, "i1"))
    beta = e.op("stablehlo.select", [identity, alphr, beta], one_r)
    tau = r("divide", r("subtract", beta, alphr), beta)
    if cplx:
        tau = e.op("stablehlo.complex", [tau, r("divide", r("negate", alphi), beta)], one_t)
        beta_c = e.op("stablehlo.complex", [beta, e.constant("0.0", one_r)], one_t)
    else:
        beta_c = beta
    tau = e.op("stablehlo.select", [identity, e.constant(zero_c, one_t), tau], one_t)
    denom = e.op("stablehlo.select", [identity, e.constant(one_c, one_t),
                                      e.op("stablehlo.subtract", [alpha, beta_c], one_t)], one_t)
    v = e.op("stablehlo.select", [below, e.op("stablehlo.divide", [tail, x.full(denom, col_t)], col_t),
                                  e.op("stablehlo.select", [at, e.constant(one_c, col_t), zeros], col_t)], col_t)
    # The trailing columns: A <- A - conj(tau) v (v^H A).
    w = x.sum_rows(e.op("stablehlo.multiply", [x.full(_conj(e, v, col_t), x.t), "%acc"], x.t), m, n)
    update = e.op("stablehlo.multiply", [x.full(_conj(e, tau, one_t), x.t),
                                         e.op("stablehlo.multiply", [x.full(v, x.t), x.full(w, x.t)], x.t)], x.t)
    k_all = x.scalar_at("%ki", m, n)
    right = x.cmp(all_cols, k_all, "GT")
    applied = e.op("stablehlo.select", [right, e.op("stablehlo.subtract", ["%acc", update], x.t), "%acc"], x.t)
    # Column k: beta on the diagonal (alpha when there is no reflection), v below it.
    beta_c = e.op("stablehlo.select", [identity, alpha, beta_c], one_t)
    on_col = x.cmp(all_cols, k_all, "EQ")
    stored = e.op("stablehlo.select", [below, v, e.op("stablehlo.select", [at, x.full(beta_c, col_t), column], col_t)], col_t)
    nxt = e.op("stablehlo.select", [on_col, x.full(stored, x.t), applied], x.t)
    taus = e.op("stablehlo.dynamic_update_slice", ["%taus", e.op("stablehlo.reshape", [tau], tensor_type(x.batch + [1], elem)),
                                                   *x.lead, "%ki"], tau_t)
    e.line(f"scf.yield {nxt}, {taus} : {x.t}, {tau_t}")
    e.line("}")
    e.line(f"return %loop#0, %loop#1 : {x.t}, {tau_t}")
    _replace(op, e, ["a"])


def _conj(e: Emitter, value: str, t: str) -> str:
    if "complex" not in t:
        return value
    part_t = t.replace("complex<", "").replace(">>", ">")
    re = e.op("stablehlo.real", [value], part_t)
    im = e.op("stablehlo.negate", [e.op("stablehlo.imag", [value], part_t)], part_t)
    return e.op("stablehlo.complex", [re, im], t)


def orgqr(op, config: dict) -> None:
    """Q = H_0 H_1 ... H_(k-1), its first n columns (n the columns of the operand), as
    LAPACK's org2r/ung2r: the reflectors applied to the identity, last one first:
    Q <- Q - tau v (v^H Q)."""
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    cplx = elem.startswith("complex")
    one_c, zero_c = ("(1.0, 0.0)", "(0.0, 0.0)") if cplx else ("1.0", "0.0")
    steps = ir.RankedTensorType(op.operands[1].type).shape[-1]
    e = Emitter(a=tensor_type(shape, elem), tau=tensor_type(shape[:-2] + [steps], elem))
    x = _Matrix(e, shape, elem)
    m, n = x.m, x.n
    col_t = x.type(m, 1)
    rows = x.iota(0, m, 1)
    eye = e.op("stablehlo.select", [x.cmp(x.iota(0, m, n), x.iota(1, m, n), "EQ"), e.constant(one_c, x.t),
                                    e.constant(zero_c, x.t)], x.t)
    _loop_header(e, steps, [("q", eye, x.t)], down=True)
    k_col = x.scalar_at("%ki", m, 1)
    column = x.slice("%a", x.zero_i, "%ki", m, 1)
    v = e.op("stablehlo.select", [x.cmp(rows, k_col, "GT"), column,
                                  e.op("stablehlo.select", [x.cmp(rows, k_col, "EQ"), e.constant(one_c, col_t),
                                                            e.constant(zero_c, col_t)], col_t)], col_t)
    tau = e.op("stablehlo.dynamic_slice", ["%tau", *x.lead, "%ki"], tensor_type(x.batch + [1], elem),
               f"slice_sizes = {i64_array(x.batch + [1])}")
    tau = e.op("stablehlo.reshape", [tau], x.type(1, 1))
    w = x.sum_rows(e.op("stablehlo.multiply", [x.full(_conj(e, v, col_t), x.t), "%q"], x.t), m, n)
    update = e.op("stablehlo.multiply", [x.full(tau, x.t), e.op("stablehlo.multiply", [x.full(v, x.t), x.full(w, x.t)], x.t)], x.t)
    nxt = e.op("stablehlo.subtract", ["%q", update], x.t)
    e.line(f"scf.yield {nxt} : {x.t}")
    e.line("}")
    e.line(f"return %loop#0 : {x.t}")
    _replace(op, e, ["a", "tau"])


def _open_sweeps(e, sweeps: int, n: int, a: str, v: str, a_t: str, v_t: str) -> None:
    """Open the Jacobi loops: `sweeps` sweeps over the pairs p < q of n columns,
    carrying (A, V) as %qa/%qv, with p and q as rank-0 i64 tensors %pi and %qi."""
    e.line("%c0 = arith.constant 0 : index")
    e.line("%c1 = arith.constant 1 : index")
    e.line(f"%cn = arith.constant {n} : index")
    e.line(f"%csweeps = arith.constant {sweeps} : index")
    e.line(f"%res:2 = scf.for %sweep = %c0 to %csweeps step %c1 iter_args(%sa = {a}, %sv = {v}) "
           f"-> ({a_t}, {v_t}) {{", sa=a_t, sv=v_t)
    e.line(f"%pres:2 = scf.for %p = %c0 to %cn step %c1 iter_args(%pa = %sa, %pv = %sv) -> ({a_t}, {v_t}) {{",
           pa=a_t, pv=v_t)
    e.line("%p1 = arith.addi %p, %c1 : index")
    e.line(f"%qres:2 = scf.for %q = %p1 to %cn step %c1 iter_args(%qa = %pa, %qv = %pv) -> ({a_t}, {v_t}) {{",
           qa=a_t, qv=v_t)
    e.line("%p64 = arith.index_cast %p : index to i64")
    e.line("%q64 = arith.index_cast %q : index to i64")
    e.line("%pi = tensor.from_elements %p64 : tensor<i64>", pi="tensor<i64>")
    e.line("%qi = tensor.from_elements %q64 : tensor<i64>", qi="tensor<i64>")


def _close_sweeps(e, a_next: str, v_next: str, a_t: str, v_t: str) -> None:
    """Yield the rotated (A, V) and close the loops `_open_sweeps` opened (%res#0/1)."""
    e.line(f"scf.yield {a_next}, {v_next} : {a_t}, {v_t}")
    e.line("}")
    e.line(f"scf.yield %qres#0, %qres#1 : {a_t}, {v_t}")
    e.line("}")
    e.line(f"scf.yield %pres#0, %pres#1 : {a_t}, {v_t}")
    e.line("}")


def _rotate(e: Emitter, cos: str, sin: str, u: str, w: str, t: str) -> tuple[str, str]:
    """(cos u - sin w, sin u + cos w): a plane rotation of the pair of slices (u, w)."""
    new_u = e.op("stablehlo.subtract", [e.op("stablehlo.multiply", [cos, u], t),
                                        e.op("stablehlo.multiply", [sin, w], t)], t)
    new_w = e.op("stablehlo.add", [e.op("stablehlo.multiply", [sin, u], t),
                                   e.op("stablehlo.multiply", [cos, w], t)], t)
    return new_u, new_w


def _jacobi_rotation(e, x, app, aqq, apq, one_r, one_t, one_c, cplx):
    """(cos, sin, phase) of the rotation that zeroes the off-diagonal entry of the 2x2
    Hermitian block [[app, apq], [conj(apq), aqq]] (Golub & Van Loan, sym.schur2).
    Complex: `phase` = apq / |apq| first turns the entry real (None for real types);
    cos and sin are then returned as complex values of type `one_t`."""

    def c(value):
        return e.constant(value, one_r)

    def f(name, *args):
        return e.op(f"stablehlo.{name}", list(args), one_r)

    phase = None
    if cplx:
        app, aqq = f("real", app), f("real", aqq)
        size = f("abs", apq)
        nonzero = x.cmp(size, c("0.0"), "NE")
        as_c = lambda r: e.op("stablehlo.complex", [r, c("0.0")], one_t)  # noqa: E731
        phase = e.op("stablehlo.select", [nonzero, e.op("stablehlo.divide", [apq, as_c(size)], one_t),
                                          e.constant(one_c, one_t)], one_t)
        apq = size
    tau = f("divide", f("subtract", aqq, app), f("multiply", c("2.0"), apq))
    sign = e.op("stablehlo.select", [x.cmp(tau, c("0.0"), "GE"), c("1.0"), c("-1.0")], one_r)
    t = f("divide", sign, f("add", f("abs", tau), f("sqrt", f("add", c("1.0"), f("multiply", tau, tau)))))
    cos = f("rsqrt", f("add", c("1.0"), f("multiply", t, t)))
    sin = f("multiply", t, cos)
    skip = x.cmp(apq, c("0.0"), "EQ")
    cos = e.op("stablehlo.select", [skip, c("1.0"), cos], one_r)
    sin = e.op("stablehlo.select", [skip, c("0.0"), sin], one_r)
    if cplx:
        cos, sin = as_c(cos), as_c(sin)
    return cos, sin, phase


def syevd(op, config: dict) -> None:
    """Symmetric (Hermitian) eigendecomposition: eigenvectors (columns), eigenvalues
    ascending, and info = 0. Cyclic Jacobi rotations, a fixed number of sweeps
    (convergence is quadratic), over the matrix the `uplo` triangle describes; then a
    sort. Complex: each rotation first turns A[p, q] real by a phase on column q."""
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    part = _real_type(elem)
    cplx = part != elem
    lower = _option(op, config, "uplo", "LU", "L") == "L"
    _option(op, config, "mode", "VN", "V")
    e = Emitter(a=tensor_type(shape, elem))
    x = _Matrix(e, shape, elem)
    n, rank, batch = x.n, x.rank, x.batch
    sweeps = 10 if elem == "f32" else 16
    one_t, col_t, row_t = x.type(1, 1), x.type(n, 1), x.type(1, n)
    one_r = x.type(1, 1, part)
    swap = i64_array(list(range(rank - 2)) + [rank - 1, rank - 2])
    rows, cols = x.iota(0, n, n), x.iota(1, n, n)
    mirrored = _conj(e, e.op("stablehlo.transpose", ["%a"], x.t, f"permutation = {swap}"), x.t)
    a = e.op("stablehlo.select", [x.cmp(rows, cols, "GE" if lower else "LE"), "%a", mirrored], x.t)
    one_c, zero_c = ("(1.0, 0.0)", "(0.0, 0.0)") if cplx else ("1.0", "0.0")
    eye = e.op("stablehlo.select", [x.cmp(rows, cols, "EQ"), e.constant(one_c, x.t), e.constant(zero_c, x.t)], x.t)
    _open_sweeps(e, sweeps, n, a, eye, x.t, x.t)
    app = x.slice("%qa", "%pi", "%pi", 1, 1)
    aqq = x.slice("%qa", "%qi", "%qi", 1, 1)
    apq = x.slice("%qa", "%pi", "%qi", 1, 1)

    cos, sin, phase = _jacobi_rotation(e, x, app, aqq, apq, one_r, one_t, one_c, cplx)

    def rotate(m, along_rows):
        # Columns p, q of M J (or rows p, q of J^T M): (c u - s w, s u + c w).
        size, shape_t = ((1, n), row_t) if along_rows else ((n, 1), col_t)
        where = (lambda i: (i, x.zero_i)) if along_rows else (lambda i: (x.zero_i, i))
        u = x.slice(m, *where("%pi"), *size)
        w = x.slice(m, *where("%qi"), *size)
        if phase is not None:  # column q times conj(phase); row q times phase
            turn = phase if along_rows else _conj(e, phase, one_t)
            w = e.op("stablehlo.multiply", [x.full(turn, shape_t), w], shape_t)
        cb, sb = x.full(cos, shape_t), x.full(sin, shape_t)
        new_u, new_w = _rotate(e, cb, sb, u, w, shape_t)
        m = e.op("stablehlo.dynamic_update_slice", [m, new_u, *x.lead, *where("%pi")], x.t)
        return e.op("stablehlo.dynamic_update_slice", [m, new_w, *x.lead, *where("%qi")], x.t)

    a_next = rotate(rotate("%qa", False), True)
    v_next = rotate("%qv", False)
    _close_sweeps(e, a_next, v_next, x.t, x.t)
    e.types["%res#0"] = e.types["%res#1"] = x.t

    # Eigenvalues ascending, the vectors' columns in the same order: sort the columns
    # of V together with the eigenvalues broadcast down the rows.
    diag = linalg_ops._diagonal(e, "%res#0", x.cmp(rows, cols, "EQ"), shape, elem)
    w_t, keys_t = tensor_type(batch + [n], part), x.type(n, n, part)
    if cplx:  # a Hermitian matrix's diagonal is real; the imaginary parts are rounding
        diag = e.op("stablehlo.real", [diag], w_t)
    keys = x.bcast(diag, keys_t, list(range(rank - 2)) + [rank - 1])
    scalar, key = tensor_type([], elem), tensor_type([], part)
    sorted_ = e.fresh()
    e.line(f'{sorted_}:2 = "stablehlo.sort"({keys}, %res#1) ({{\n'
           f"^bb0(%k0: {key}, %k1: {key}, %w0: {scalar}, %w1: {scalar}):\n"
           f'  %lt = "stablehlo.compare"(%k0, %k1) {{comparison_direction = #stablehlo<comparison_direction LT>}}'
           f" : ({key}, {key}) -> tensor<i1>\n"
           f'  "stablehlo.return"(%lt) : (tensor<i1>) -> ()\n'
           f"}}) {{dimension = {rank - 1} : i64, is_stable = true}} : ({keys_t}, {x.t}) -> ({keys_t}, {x.t})")
    e.types[f"{sorted_}#0"], e.types[f"{sorted_}#1"] = keys_t, x.t
    first_row = e.op("stablehlo.slice", [f"{sorted_}#0"], x.type(1, n, part),
                     f"start_indices = {i64_array([0] * rank)}, limit_indices = {i64_array(batch + [1, n])}, "
                     f"strides = {i64_array([1] * rank)}")
    values = e.op("stablehlo.reshape", [first_row], w_t)
    info_t = tensor_type(batch, "i32")
    e.line(f"return {sorted_}#1, {values}, {e.constant('0', info_t)} : {x.t}, {w_t}, {info_t}")
    _replace(op, e, ["a"])


def gesdd(op, config: dict) -> None:
    """SVD by one-sided Jacobi: rotate pairs of columns of W = A (A^T when A is wide)
    until they are orthogonal, the same rotations accumulating in V; the singular
    values are then the column norms, sorted descending. U is the Q of a Householder
    QR of W's normalised columns (signs kept), which also completes it to a square
    basis (mode 'A') and gives columns of zero singular values an orthonormal vector.
    Mode 'N' leaves U and V^T zeros; the first result (destroyed by LAPACK) is A."""
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape, elem = list(a_type.shape), str(a_type.element_type)
    part = _real_type(elem)
    cplx = part != elem
    mode = _option(op, config, "mode", "NSA", "N")
    batch, rank = shape[:-2], len(shape)
    m, n = shape[-2], shape[-1]
    wide = m < n
    e = Emitter(a=tensor_type(shape, elem))
    swap = i64_array(list(range(rank - 2)) + [rank - 1, rank - 2])
    w = "%a"
    if wide:
        w_t = tensor_type(batch + [n, m], elem)
        w = _conj(e, e.op("stablehlo.transpose", [w], w_t, f"permutation = {swap}"), w_t)
        m, n = n, m
    x = _Matrix(e, batch + [m, n], elem)
    v_t = x.type(n, n)
    one_c, zero_c = ("(1.0, 0.0)", "(0.0, 0.0)") if cplx else ("1.0", "0.0")
    eye = e.op("stablehlo.select", [x.cmp(x.iota(0, n, n), x.iota(1, n, n), "EQ"), e.constant(one_c, v_t),
                                    e.constant(zero_c, v_t)], v_t)
    sweeps = 10 if elem == "f32" else 16
    one_t, col_t, vcol_t = x.type(1, 1), x.type(m, 1), x.type(n, 1)
    one_r = x.type(1, 1, part)
    _open_sweeps(e, sweeps, n, w, eye, x.t, v_t)
    u = x.slice("%qa", x.zero_i, "%pi", m, 1)
    v = x.slice("%qa", x.zero_i, "%qi", m, 1)

    def dot(y, z):
        return x.sum_rows(e.op("stablehlo.multiply", [_conj(e, y, col_t), z], col_t), m, 1)

    alpha, beta, gamma = dot(u, u), dot(v, v), dot(u, v)
    # Complex: u^H v is turned real by a phase on column q (as in heevd).
    cos, sin, phase = _jacobi_rotation(e, x, alpha, beta, gamma, one_r, one_t, one_c, cplx)
    if cplx:
        turn = _conj(e, phase, one_t)
        v = e.op("stablehlo.multiply", [x.full(turn, col_t), v], col_t)

    def rotate(mat, mat_t, column_t, rows, columns=None):
        # Columns p, q of M J: (c u - s w, s u + c w).
        if columns:
            cu, cw = columns
        else:
            cu, cw = x.slice(mat, x.zero_i, "%pi", rows, 1), x.slice(mat, x.zero_i, "%qi", rows, 1)
            if phase is not None:
                cw = e.op("stablehlo.multiply", [x.full(turn, column_t), cw], column_t)
        cb, sb = x.full(cos, column_t), x.full(sin, column_t)
        new_u, new_w = _rotate(e, cb, sb, cu, cw, column_t)
        mat = e.op("stablehlo.dynamic_update_slice", [mat, new_u, *x.lead, x.zero_i, "%pi"], mat_t)
        return e.op("stablehlo.dynamic_update_slice", [mat, new_w, *x.lead, x.zero_i, "%qi"], mat_t)

    a_next = rotate("%qa", x.t, col_t, m, (u, v))
    v_next = rotate("%qv", v_t, vcol_t, n) if mode != "N" else "%qv"
    _close_sweeps(e, a_next, v_next, x.t, v_t)
    e.types["%res#0"], e.types["%res#1"] = x.t, v_t
    s_t = tensor_type(batch + [n], part)
    squares = e.op("stablehlo.multiply", [_conj(e, "%res#0", x.t), "%res#0"], x.t)
    if cplx:
        squares = e.op("stablehlo.real", [squares], x.type(m, n, part))
    norms = e.op("stablehlo.sqrt", [e.op("stablehlo.reshape", [x.sum_rows(squares, m, n, part)], s_t)], s_t)

    def sort_desc(keys, operands):
        # Stable, so equal keys give every operand the same permutation.
        types = [e.types[keys]] + [e.types[o] for o in operands]
        scalars = [tensor_type([], part)] + [tensor_type([], elem)] * len(operands)
        args = ", ".join(f"%s{i}a: {t}, %s{i}b: {t}" for i, t in enumerate(scalars))
        value = e.fresh()
        e.line(f'{value}:{len(types)} = "stablehlo.sort"({", ".join([keys, *operands])}) ({{\n'
               f"^bb0({args}):\n"
               f'  %gt = "stablehlo.compare"(%s0a, %s0b) {{comparison_direction = #stablehlo<comparison_direction GT>}}'
               f" : ({scalars[0]}, {scalars[0]}) -> tensor<i1>\n"
               f'  "stablehlo.return"(%gt) : (tensor<i1>) -> ()\n'
               f"}}) {{dimension = {len(e.types[keys][7:].split('x')) - 2} : i64, is_stable = true}} : "
               f"({', '.join(types)}) -> ({', '.join(types)})")
        for i, t in enumerate(types):
            e.types[f"{value}#{i}"] = t
        return [f"{value}#{i}" for i in range(len(types))]

    values = sort_desc(norms, [])[0]
    results = [str(r.type) for r in op.results]
    if mode == "N":
        u_out, vt_out = e.constant(zero_c, results[2]), e.constant(zero_c, results[3])
    else:
        by_col = lambda t: x.bcast(norms, t, list(range(rank - 2)) + [rank - 1])  # noqa: E731
        _, w_sorted = sort_desc(by_col(x.type(m, n, part)), ["%res#0"])
        _, v_sorted = sort_desc(by_col(x.type(n, n, part)), ["%res#1"])
        sigma = x.bcast(values, x.type(m, n, part), list(range(rank - 2)) + [rank - 1])
        zero = x.cmp(sigma, e.constant("0.0", x.type(m, n, part)), "EQ")
        if cplx:
            sigma = e.op("stablehlo.complex", [sigma, e.constant("0.0", x.type(m, n, part))], x.t)
        unit = e.op("stablehlo.select", [zero, e.constant(zero_c, x.t),
                                         e.op("stablehlo.divide", [w_sorted, sigma], x.t)], x.t)
        # Full when U (V^T when wide, which is U' transposed) is square.
        full = (ir.RankedTensorType(op.results[3].type).shape[-2] == m if wide
                else ir.RankedTensorType(op.results[2].type).shape[-1] == m)
        u_cols = m if full else n
        q = _orthonormal_basis(e, x, unit, u_cols)
        if wide:  # A = V' S U'^T
            u_out = v_sorted
            vt_out = _conj(e, e.op("stablehlo.transpose", [q], results[3], f"permutation = {swap}"), results[3])
        else:
            u_out = q
            vt_out = _conj(e, e.op("stablehlo.transpose", [v_sorted], results[3], f"permutation = {swap}"),
                           results[3])
    info = e.constant("0", results[4])
    e.line(f"return %a, {values}, {u_out}, {vt_out}, {info} : {', '.join(results)}")
    _replace(op, e, ["a"])


def _orthonormal_basis(e: Emitter, x: "_Matrix", unit: str, cols: int) -> str:
    """The first `cols` columns of Q in unit = Q R (Householder), each column j < n
    times the sign of R[j, j]: `unit`'s orthonormal columns unchanged, and zero or
    extra columns made orthonormal to them."""
    m, n, elem = x.m, x.n, x.elem
    geqrf_t = f"({x.t}) -> ({x.t}, {tensor_type(x.batch + [n], elem)})"
    qr = e.fresh()
    routine = {"f32": "s", "f64": "d", "complex<f32>": "c", "complex<f64>": "z"}[elem]
    cplx = elem.startswith("complex")
    e.line(f'{qr}:2 = "stablehlo.custom_call"({unit}) {{call_target_name = "lapack_{routine}geqrf_ffi"}} : {geqrf_t}')
    e.types[f"{qr}#0"], e.types[f"{qr}#1"] = x.t, tensor_type(x.batch + [n], elem)
    factors = f"{qr}#0"
    if cols > n:
        factors = e.op("stablehlo.pad", [factors, e.constant("(0.0, 0.0)" if cplx else "0.0", tensor_type([], elem))],
                       x.type(m, cols),
                       f"edge_padding_low = {i64_array([0] * x.rank)}, "
                       f"edge_padding_high = {i64_array([0] * (x.rank - 1) + [cols - n])}, "
                       f"interior_padding = {i64_array([0] * x.rank)}")
    elif cols < n:
        raise ValueError("fewer columns than the factored matrix")
    q_t = x.type(m, cols)
    q = e.op("stablehlo.custom_call", [factors, f"{qr}#1"], q_t,
             f'call_target_name = "lapack_{routine}{"ungqr" if cplx else "orgqr"}_ffi"')
    # sign(R[j, j]) for j < n (1 where R[j, j] is 0), 1 for the added columns.
    r_diag = linalg_ops._diagonal(e, e.op("stablehlo.slice", [f"{qr}#0"], x.type(n, n),
                                          f"start_indices = {i64_array([0] * x.rank)}, "
                                          f"limit_indices = {i64_array(x.batch + [n, n])}, "
                                          f"strides = {i64_array([1] * x.rank)}"),
                                  x.cmp(x.iota(0, n, n), x.iota(1, n, n), "EQ"), x.batch + [n, n], elem)
    d_t = tensor_type(x.batch + [n], elem)
    if cplx:  # the phase of R[j, j] (1 where it is 0)
        part_t = tensor_type(x.batch + [n], _real_type(elem))
        size = e.op("stablehlo.abs", [r_diag], part_t)
        signs = e.op("stablehlo.select", [
            e.op("stablehlo.compare", [size, e.constant("0.0", part_t)], tensor_type(x.batch + [n], "i1"),
                 "comparison_direction = #stablehlo<comparison_direction EQ>"),
            e.constant("(1.0, 0.0)", d_t),
            e.op("stablehlo.divide", [r_diag, e.op("stablehlo.complex", [size, e.constant("0.0", part_t)], d_t)],
                 d_t)], d_t)
    else:
        signs = e.op("stablehlo.select", [x.cmp(r_diag, e.constant("0.0", d_t), "LT"),
                                          e.constant("-1.0", d_t), e.constant("1.0", d_t)], d_t)
    if cols > n:
        signs = e.op("stablehlo.pad", [signs, e.constant("(1.0, 0.0)" if cplx else "1.0", tensor_type([], elem))],
                     tensor_type(x.batch + [cols], elem),
                     f"edge_padding_low = {i64_array([0] * (x.rank - 1))}, "
                     f"edge_padding_high = {i64_array([0] * (x.rank - 2) + [cols - n])}, "
                     f"interior_padding = {i64_array([0] * (x.rank - 1))}")
    signs = x.bcast(signs, q_t, list(range(x.rank - 2)) + [x.rank - 1])
    return e.op("stablehlo.multiply", [q, signs], q_t)


# ungqr and heevd are the complex names of orgqr and syevd. lapack_reductions adds
# gehrd and sytrd/hetrd, lapack_eigen gees and geev (they import the helpers below, so
# they register themselves).
_ROUTINES = {"potrf": potrf, "trsm": trsm, "getrf": getrf, "geqrf": geqrf, "orgqr": orgqr,
             "ungqr": orgqr, "syevd": syevd, "heevd": syevd, "gesdd": gesdd}


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
