"""JAX's reductions to condensed form: `lapack_?gehrd_ffi` (Hessenberg, from
jax.scipy.linalg.hessenberg and lax.linalg.hessenberg) and `lapack_?sytrd_ffi` /
`lapack_?hetrd_ffi` (symmetric/Hermitian tridiagonal, lax.linalg.tridiagonal).

Both return Householder reflectors packed as LAPACK packs them, and users rebuild Q
from them (jsl.hessenberg(calc_q=True) runs ?orgqr on them), so the rules follow
LAPACK's unblocked routines (?gehd2, ?sytd2/?hetd2) step by step, with ?larfg's
reflectors: the outputs then agree with JAX's, which runs LAPACK, to rounding. Each
is one scf.for step per column over the whole [..., n, n] matrix, masked to the rows
and columns the step touches, so the loop body and compile time do not grow with n.

The rules register themselves in lapack's routine table: they build on its helpers,
and lapack.py cannot import this module before those exist.
"""

from __future__ import annotations

import re

from .._mlir import ir
from ..errors import CompileError
from . import linalg_ops
from .lapack import _ROUTINES, _conj, _loop_header, _Matrix, _option, _real_type, _reduce, _replace
from .text import Emitter, i64_array, tensor_type


def _int_option(op, key: str, default: int) -> int:
    """An integer of backend_config ({low = 1 : i32}); lapack._config keeps one byte,
    too little for a row index."""
    for name in ("backend_config", "mhlo.backend_config"):
        if name in op.attributes:
            attr = op.attributes[name]
            if isinstance(attr, ir.DictAttr) and key in attr:
                return ir.IntegerAttr(attr[key]).value
    return default


def _target(op) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _square(op) -> tuple[list[int], str]:
    a_type = ir.RankedTensorType(op.operands[0].type)
    shape = list(a_type.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise CompileError.at(op, f"custom_call @{_target(op)}: expected a square matrix "
                                  f"(or a batch of them), got {a_type}")
    return shape, str(a_type.element_type)


def _expect_results(op, want: list[str]) -> None:
    got = [str(r.type) for r in op.results]
    if got != want:
        raise CompileError.at(op, f"custom_call @{_target(op)}: expected the results ({', '.join(want)}), "
                                  f"got ({', '.join(got)})")


class _Step:
    """Per-step values shared by the rules: masks over rows and columns, and
    column/row views of [..., n, 1] vectors."""

    def __init__(self, e: Emitter, x: _Matrix):
        self.e, self.x, self.n = e, x, x.n
        self.cplx = x.elem.startswith("complex")
        self.part = _real_type(x.elem)
        self.zero = "(0.0, 0.0)" if self.cplx else "0.0"
        self.one = "(1.0, 0.0)" if self.cplx else "1.0"
        self.col_t, self.row_t = x.type(x.n, 1), x.type(1, x.n)
        self.one_t, self.one_r = x.type(1, 1), x.type(1, 1, self.part)
        self.rows_c = x.iota(0, x.n, 1)
        self.rows, self.cols = x.iota(0, x.n, x.n), x.iota(1, x.n, x.n)

    def at(self, index: str, rows: int, cols: int) -> str:
        return self.x.scalar_at(index, rows, cols)

    def both(self, a: str, b: str) -> str:
        return self.e.op("stablehlo.and", [a, b], self.e.types[a])

    def where(self, mask: str, a: str, b: str) -> str:
        return self.e.op("stablehlo.select", [mask, a, b], self.e.types[a])

    def as_row(self, col: str) -> str:
        return self.e.op("stablehlo.reshape", [col], self.row_t)

    def mul(self, a: str, b: str) -> str:
        """a * b, each [..., n or 1, n or 1], broadcast to the larger shape."""
        ta, tb = self.e.types[a], self.e.types[b]
        kinds = {ta, tb}
        if self.x.t in kinds or {self.col_t, self.row_t} <= kinds:
            t = self.x.t
        else:
            t = next((k for k in (self.col_t, self.row_t) if k in kinds), ta)
        a = a if ta == t else self.x.full(a, t)
        b = b if tb == t else self.x.full(b, t)
        return self.e.op("stablehlo.multiply", [a, b], t)

    def matvec(self, m: str, v: str) -> str:
        """M v for a [..., n, n] M and a column v, as a column."""
        total = _reduce(self.e, self.mul(m, self.as_row(v)), [self.x.rank - 1],
                        tensor_type(self.x.batch + [self.n], self.x.elem), self.x.elem, "stablehlo.add", self.zero)
        return self.e.op("stablehlo.reshape", [total], self.col_t)

    def vecmat(self, v: str, m: str) -> str:
        """v^H M for a column v, as a row."""
        return self.x.sum_rows(self.mul(_conj(self.e, v, self.col_t), m), self.n, self.n)

    def dot(self, a: str, b: str) -> str:
        """a^H b of two columns, [..., 1, 1]."""
        return self.x.sum_rows(self.mul(_conj(self.e, a, self.col_t), b), self.n, 1)

    def _elem(self, value: str) -> str:
        return re.sub(r"^(\d+x)*", "", self.e.types[value][len("tensor<"):-1])

    def put(self, into: str, value: str, index: str) -> str:
        """`into` ([..., size]) with the [..., 1, 1] `value` at `index`."""
        flat = self.e.op("stablehlo.reshape", [value], tensor_type(self.x.batch + [1], self._elem(value)))
        return self.e.op("stablehlo.dynamic_update_slice", [into, flat, *self.x.lead, index], self.e.types[into])

    def larfg(self, alpha: str, tail: str, length: int | None = None) -> tuple[str, str, str]:
        """LAPACK's ?larfg for the vector (alpha, tail), `tail` a column holding zeros
        outside the reflector: (beta, tau, scale) with H = I - tau v v^H, v = (1, tail *
        scale), H^H (alpha, tail) = (beta, 0). beta = -sign(Re alpha) ||(alpha, tail)||,
        tau = (beta - alpha) / beta, scale = 1 / (alpha - beta); when tail is zero and
        alpha real there is no reflection: tau = 0, beta = alpha."""
        e, x, one_r, one_t = self.e, self.x, self.one_r, self.one_t
        length = length or self.n  # the rows of `tail`
        col_r = x.type(length, 1, self.part)

        def r(name, *args, t=one_r):
            return e.op(f"stablehlo.{name}", list(args), t)

        if self.cplx:
            real, imag = r("real", tail, t=col_r), r("imag", tail, t=col_r)
            squares = r("add", r("multiply", real, real, t=col_r), r("multiply", imag, imag, t=col_r), t=col_r)
            alphr, alphi = r("real", alpha), r("imag", alpha)
        else:
            squares, alphr, alphi = r("multiply", tail, tail, t=col_r), alpha, None
        sq = x.sum_rows(squares, length, 1, self.part)
        norm2 = r("add", r("multiply", alphr, alphr), sq)
        if self.cplx:
            norm2 = r("add", norm2, r("multiply", alphi, alphi))
        norm = r("sqrt", norm2)
        zero_r = e.constant("0.0", one_r)
        beta = e.op("stablehlo.select", [x.cmp(alphr, zero_r, "LT"), norm, r("negate", norm)], one_r)
        identity = x.cmp(sq, zero_r, "EQ")
        if self.cplx:
            identity = self.both(identity, x.cmp(alphi, zero_r, "EQ"))
        beta = e.op("stablehlo.select", [identity, alphr, beta], one_r)
        tau = r("divide", r("subtract", beta, alphr), beta)
        if self.cplx:
            tau = e.op("stablehlo.complex", [tau, r("divide", r("negate", alphi), beta)], one_t)
            beta = e.op("stablehlo.complex", [beta, zero_r], one_t)
        zero_t, one_c = e.constant(self.zero, one_t), e.constant(self.one, one_t)
        tau = e.op("stablehlo.select", [identity, zero_t, tau], one_t)
        scale = e.op("stablehlo.divide", [one_c, e.op("stablehlo.select", [
            identity, one_c, e.op("stablehlo.subtract", [alpha, beta], one_t)], one_t)], one_t)
        return beta, tau, scale

    def reflector(self, tail_mask: str, tail: str, scale: str, at_one: str) -> str:
        """v: tail * scale under `tail_mask`, 1 where `at_one`, zeros elsewhere."""
        e = self.e
        zeros = e.constant(self.zero, self.col_t)
        return self.where(tail_mask, self.mul(tail, scale),
                          self.where(at_one, e.constant(self.one, self.col_t), zeros))


def gehrd(op, config: dict) -> None:
    """Hessenberg form Q^H A Q = H, as LAPACK's gehd2: for k = ilo-1 .. ihi-2 (0-based),
    the reflector H_k (v[k+1] = 1, v[k+2:ihi] stored below the subdiagonal of column
    k) is applied from the right to rows < ihi, then its adjoint from the left to the
    columns after k. Results: H with the reflectors below its subdiagonal, the n-1
    taus (0 outside ilo..ihi-1) and info = 0. `low`/`high` are ilo/ihi, 1-based."""
    shape, elem = _square(op)
    n = shape[-1]
    low, high = _int_option(op, "low", 1), _int_option(op, "high", n)
    if not (1 <= low <= max(1, n) and min(low, n) <= high <= n):
        raise CompileError.at(op, f"custom_call @{_target(op)}: low = {low}, high = {high} must satisfy "
                                  f"1 <= low <= high <= {n} (LAPACK's ilo, ihi)")
    e = Emitter(a=tensor_type(shape, elem))
    x = _Matrix(e, shape, elem)
    s = _Step(e, x)
    tau_t, info_t = tensor_type(x.batch + [max(n - 1, 0)], elem), tensor_type(x.batch, "i32")
    _expect_results(op, [x.t, tau_t, info_t])
    taus0 = e.constant(s.zero, tau_t)
    info = e.constant("0", info_t)
    steps = high - low
    if steps <= 0:
        e.line(f"return %a, {taus0}, {info} : {x.t}, {tau_t}, {info_t}")
        _replace(op, e, ["a"])
        return
    _loop_header(e, steps, [("acc", "%a", x.t), ("taus", taus0, tau_t)])
    k = e.op("stablehlo.add", ["%ki", e.constant(str(low - 1), "tensor<i64>")], "tensor<i64>")
    k1 = e.op("stablehlo.add", [k, e.constant("1", "tensor<i64>")], "tensor<i64>")
    rows_c, rows, cols = s.rows_c, s.rows, s.cols
    high_c, high_all = e.constant(str(high), x.type(n, 1, "i64")), e.constant(str(high), x.type(n, n, "i64"))
    inside_c = x.cmp(rows_c, high_c, "LT")
    tail_mask = s.both(x.cmp(rows_c, s.at(k1, n, 1), "GT"), inside_c)
    column = x.slice("%acc", x.zero_i, k, n, 1)
    alpha = x.slice("%acc", k1, k, 1, 1)
    tail = s.where(tail_mask, column, e.constant(s.zero, s.col_t))
    beta, tau, scale = s.larfg(alpha, tail)
    v = s.reflector(tail_mask, tail, scale, x.cmp(rows_c, s.at(k1, n, 1), "EQ"))

    # From the right, A[:ihi, k+1:ihi] -= tau (A v) v^H; then from the left,
    # A[k+1:ihi, k+1:] -= conj(tau) v (v^H A).
    k_all = s.at(k, n, n)
    inside_rows = x.cmp(rows, high_all, "LT")
    after_k = x.cmp(cols, k_all, "GT")
    right = s.mul(s.mul(s.matvec("%acc", v), tau), _conj(e, s.as_row(v), s.row_t))
    acc = s.where(s.both(s.both(inside_rows, after_k), x.cmp(cols, high_all, "LT")),
                  e.op("stablehlo.subtract", ["%acc", right], x.t), "%acc")
    left = s.mul(s.mul(v, _conj(e, tau, s.one_t)), s.vecmat(v, acc))
    acc = s.where(s.both(s.both(inside_rows, after_k), x.cmp(rows, k_all, "GT")),
                  e.op("stablehlo.subtract", [acc, left], x.t), acc)
    stored = s.where(tail_mask, v, s.where(x.cmp(rows_c, s.at(k1, n, 1), "EQ"), x.full(beta, s.col_t), column))
    acc = s.where(x.cmp(cols, k_all, "EQ"), x.full(stored, x.t), acc)
    taus = s.put("%taus", tau, k)
    e.line(f"scf.yield {acc}, {taus} : {x.t}, {tau_t}")
    e.line("}")
    e.line(f"return %loop#0, %loop#1, {info} : {x.t}, {tau_t}, {info_t}")
    _replace(op, e, ["a"])


def sytrd(op, config: dict) -> None:
    """Tridiagonal form Q^H A Q = T of a symmetric (Hermitian) A given by its `uplo`
    triangle, as LAPACK's sytd2/hetd2. Lower: for k = 0 .. n-2 the reflector H_k (v[k+1]
    = 1, v[k+2:] stored below the subdiagonal of column k) zeroes column k below the
    subdiagonal; upper: for k = n-2 .. 0, H_k (v[k] = 1, v[:k] stored above row k of
    column k+1) zeroes column k+1 above the superdiagonal. Each updates the trailing
    (leading) block A -= v w^H + w v^H, w = x - tau/2 (x^H v) v, x = tau A v. Results: A
    with T's diagonal and off-diagonal in its `uplo` triangle and the reflectors beyond
    them (the other triangle as given), d, e, the n-1 taus and info = 0."""
    lower = _option(op, config, "uplo", "LU", "L") == "L"
    shape, elem = _square(op)
    n = shape[-1]
    e = Emitter(a=tensor_type(shape, elem))
    x = _Matrix(e, shape, elem)
    s = _Step(e, x)
    part, rank = s.part, x.rank
    rows, cols, rows_c = s.rows, s.cols, s.rows_c
    d_t, e_t = tensor_type(x.batch + [n], part), tensor_type(x.batch + [max(n - 1, 0)], part)
    tau_t, info_t = tensor_type(x.batch + [max(n - 1, 0)], elem), tensor_type(x.batch, "i32")
    _expect_results(op, [x.t, d_t, e_t, tau_t, info_t])
    diagonal = x.cmp(rows, cols, "EQ")

    def real_diagonal(m):
        # ?hetd2 reads only the real part of the diagonal, and ?her2 keeps it real.
        if not s.cplx:
            return m
        part_t = x.type(n, n, part)
        real = e.op("stablehlo.complex", [e.op("stablehlo.real", [m], part_t), e.constant("0.0", part_t)], x.t)
        return s.where(diagonal, real, m)

    swap = i64_array(list(range(rank - 2)) + [rank - 1, rank - 2])
    mirrored = _conj(e, e.op("stablehlo.transpose", ["%a"], x.t, f"permutation = {swap}"), x.t)
    full = real_diagonal(s.where(x.cmp(rows, cols, "GE" if lower else "LE"), "%a", mirrored))
    taus0, es0 = e.constant(s.zero, tau_t), e.constant("0.0", e_t)
    if n > 1:
        _loop_header(e, n - 1, [("acc", full, x.t), ("taus", taus0, tau_t), ("es", es0, e_t)], down=not lower)
        one_i = e.constant("1", "tensor<i64>")
        k1 = e.op("stablehlo.add", ["%ki", one_i], "tensor<i64>")
        # The reflector's leading entry (row `lead`) and the column it reduces.
        lead, col = (k1, "%ki") if lower else ("%ki", k1)
        lead_c, lead_all = s.at(lead, n, 1), s.at(lead, n, n)
        order, order_eq = ("GT", "GE") if lower else ("LT", "LE")
        tail_mask = x.cmp(rows_c, lead_c, order)
        at_lead = x.cmp(rows_c, lead_c, "EQ")
        column = x.slice("%acc", x.zero_i, col, n, 1)
        alpha = x.slice("%acc", lead, col, 1, 1)
        tail = s.where(tail_mask, column, e.constant(s.zero, s.col_t))
        beta, tau, scale = s.larfg(alpha, tail)
        v = s.reflector(tail_mask, tail, scale, at_lead)
        active_c = x.cmp(rows_c, lead_c, order_eq)
        xv = s.where(active_c, s.mul(s.matvec("%acc", v), tau), e.constant(s.zero, s.col_t))
        half = e.op("stablehlo.multiply", [e.constant("(-0.5, 0.0)" if s.cplx else "-0.5", s.one_t), tau], s.one_t)
        w = e.op("stablehlo.add", [xv, s.mul(v, e.op("stablehlo.multiply", [half, s.dot(xv, v)], s.one_t))],
                 s.col_t)
        update = e.op("stablehlo.add", [s.mul(v, _conj(e, s.as_row(w), s.row_t)),
                                        s.mul(w, _conj(e, s.as_row(v), s.row_t))], x.t)
        block = s.both(x.cmp(rows, lead_all, order_eq), x.cmp(cols, lead_all, order_eq))
        # No reflection (tau = 0) leaves the block as it is, infinities included.
        # (_Matrix.cmp reads the element type off the type's last "x": not a complex one.)
        no_tau = e.op("stablehlo.compare", [tau, e.constant(s.zero, s.one_t)], x.type(1, 1, "i1"),
                      "comparison_direction = #stablehlo<comparison_direction EQ>")
        skip = x.full(no_tau, x.type(n, n, "i1"))
        acc = s.where(s.both(block, e.op("stablehlo.not", [skip], e.types[skip])),
                      real_diagonal(e.op("stablehlo.subtract", ["%acc", update], x.t)), "%acc")
        stored = s.where(tail_mask, v, s.where(at_lead, x.full(beta, s.col_t), column))
        acc = s.where(x.cmp(cols, s.at(col, n, n), "EQ"), x.full(stored, x.t), acc)
        beta_r = e.op("stablehlo.real", [beta], s.one_r) if s.cplx else beta
        e.line(f"scf.yield {acc}, {s.put('%taus', tau, '%ki')}, {s.put('%es', beta_r, '%ki')} : "
               f"{x.t}, {tau_t}, {e_t}")
        e.line("}")
        e.types["%loop#0"], e.types["%loop#1"], e.types["%loop#2"] = x.t, tau_t, e_t
        reduced, taus, es = "%loop#0", "%loop#1", "%loop#2"
    else:
        reduced, taus, es = full, taus0, es0
    d = linalg_ops._diagonal(e, reduced, diagonal, shape, elem)
    if s.cplx:
        d = e.op("stablehlo.real", [d], d_t)
    # T and the reflectors in the `uplo` triangle (the diagonal real), A's entries in
    # the other, which LAPACK never reads.
    out = s.where(x.cmp(rows, cols, "GT" if lower else "LT"), reduced,
                  s.where(diagonal, real_diagonal(reduced), "%a"))
    e.line(f"return {out}, {d}, {es}, {taus}, {e.constant('0', info_t)} : {x.t}, {d_t}, {e_t}, {tau_t}, {info_t}")
    _replace(op, e, ["a"])


# hetrd is the complex name of sytrd.
_ROUTINES.update(gehrd=gehrd, sytrd=sytrd, hetrd=sytrd)
