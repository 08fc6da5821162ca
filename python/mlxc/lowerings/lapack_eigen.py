"""JAX's nonsymmetric eigenproblems: `lapack_?gees_ffi` (jax.scipy.linalg.schur) and
`lapack_?geev_ffi` (jnp.linalg.eig; lax.linalg.eig for left eigenvectors too).

Both start from the Hessenberg form (the ?gehrd and ?orgqr rules) and run LAPACK's
?lahqr scheme: find the last negligible subdiagonal entry, split off a converged 1x1
block, or a 2x2 block (real: put in LAPACK's standard form by ?lanv2, complex eigenvalues
on an equal diagonal with b c < 0; complex: made triangular by one rotation), or else
chase a Francis double-shift bulge through the active block with 3x3 reflectors. Each
matrix of a batch has its own convergence, so the batch is an scf.for around an
scf.while; each bulge step touches only three rows and three columns (dynamic slices of
a matrix padded by one row and column, so a step at the bottom needs no special case).

Schur forms and eigenvectors are not unique; what users rely on holds: A = Z T Z^H with
Z unitary, T quasi-triangular in standard form, eigenvalues as LAPACK orders pairs
(positive imaginary part first), eigenvectors of unit norm with their largest
component real. Eigenvectors come from back-substitution in the complex Schur form (a
real T's 2x2 blocks made triangular by complex rotations). No balancing, no early bulge
start and no aggressive deflation: those speed LAPACK up but change no result beyond
rounding.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import CompileError
from . import linalg_ops
from .lapack import _ROUTINES, _conj, _loop_header, _Matrix, _option, _real_type, _reduce, _replace
from .lapack_reductions import _expect_results, _Step, _square, _target
from .text import Emitter, i64_array, tensor_type

_CODE = {"f32": "s", "f64": "d", "complex<f32>": "c", "complex<f64>": "z"}


class _Schur:
    """Emits the QR iteration on one [n, n] Hessenberg matrix (inside the batch loop)."""

    def __init__(self, e: Emitter, n: int, elem: str):
        # One row and column of padding (at least 3: the bulge step reads 3x3 blocks).
        self.e, self.n, self.N, self.elem = e, n, max(n + 1, 3), elem
        self.part = _real_type(elem)
        self.cplx = self.part != elem
        self.x = _Matrix(e, [self.N, self.N], elem)
        self.s = _Step(e, self.x)
        self.xn = _Matrix(e, [n, n], elem)
        self.sc, self.sr = self.x.type(1, 1), self.x.type(1, 1, self.part)
        self.zero, self.one = self.s.zero, self.s.one
        info = np.finfo(np.float32 if self.part == "f32" else np.float64)
        self.ulp, self.tiny = float(info.eps), float(info.tiny)
        self.idx = e.op("stablehlo.iota", [], tensor_type([self.N], "i64"), "iota_dimension = 0 : i64")
        self.rows3 = e.op("stablehlo.iota", [], tensor_type([3, 1], "i64"), "iota_dimension = 0 : i64")
        self.cols3 = e.op("stablehlo.iota", [], tensor_type([3, self.N], "i64"), "iota_dimension = 1 : i64")

    # -- scalars: [1, 1] tensors of the element (or real) type; indices tensor<i64>
    def f(self, name, *args, t=None):
        return self.e.op(f"stablehlo.{name}", list(args), t or self.e.types[args[0]])

    def c(self, value, t=None):
        t = t or self.sc
        if "complex" in t and not str(value).startswith("("):
            value = f"({float(value)!r}, 0.0)"
        return self.e.constant(str(value), t)

    def i(self, value: int) -> str:
        return self.e.constant(str(value), "tensor<i64>")

    def cmp(self, a, b, direction):
        return self.e.op("stablehlo.compare", [a, b], tensor_type(self.dims(a), "i1"),
                         f"comparison_direction = #stablehlo<comparison_direction {direction}>")

    def dims(self, value) -> list[int]:
        dims = []
        for part in self.e.types[value][len("tensor<"):-1].split("x"):
            if not part.isdigit():
                break
            dims.append(int(part))
        return dims

    def sel(self, m, a, b):
        return self.e.op("stablehlo.select", [m, a, b], self.e.types[a])

    def bool_(self, v) -> str:
        """An i1 for scf.if/scf.condition from a tensor<i1>."""
        name = self.e.fresh()
        self.e.line(f"{name} = tensor.extract {v}[] : tensor<i1>")
        return name

    def index(self, v) -> str:
        raw, name = self.e.fresh(), self.e.fresh()
        self.e.line(f"{raw} = tensor.extract {v}[] : tensor<i64>")
        self.e.line(f"{name} = arith.index_cast {raw} : i64 to index")
        return name

    def mag(self, v):
        return self.f("abs", v, t=self.e.types[v].replace(self.elem, self.part))

    def cplx_of(self, re, im=None):
        """A complex value of real parts (zero imaginary part by default)."""
        t = self.e.types[re]
        return self.e.op("stablehlo.complex", [re, im or self.e.constant("0.0", t)],
                         t.replace(self.part, f"complex<{self.part}>"))

    def as_elem(self, r):
        return self.cplx_of(r) if self.cplx else r

    def get(self, m, i, j):
        return self.x.slice(m, i, j, 1, 1)

    def concat(self, values, dim, t):
        return self.e.op("stablehlo.concatenate", values, t, f"dimension = {dim} : i64")

    # -- 2x2 blocks
    def lanv2(self, a, b, c, d):
        """LAPACK's dlanv2 (without its rescaling for extreme values): a rotation
        (cs, sn) and the standardised block (a, b, c, d): c = 0 (real eigenvalues), or a
        = d and b c < 0 (a complex pair)."""
        f, cst, sel, cmp = self.f, self.c, self.sel, self.cmp
        zero, one, half = cst(0.0), cst(1.0), cst(0.5)

        def sign(x, y):  # Fortran SIGN(x, y)
            return sel(cmp(y, zero, "GE"), f("abs", x), f("negate", f("abs", x)))

        c_zero, b_zero = cmp(c, zero, "EQ"), cmp(b, zero, "EQ")
        opposite = cmp(sign(one, b), sign(one, c), "NE")
        standard = f("and", cmp(f("subtract", a, d), zero, "EQ"), opposite)
        temp = f("subtract", a, d)
        p = f("multiply", half, temp)
        bcmax = f("maximum", f("abs", b), f("abs", c))
        bcmis = f("multiply", f("minimum", f("abs", b), f("abs", c)),
                  f("multiply", sign(one, b), sign(one, c)))
        scale = f("maximum", f("abs", p), bcmax)
        z = f("add", f("multiply", f("divide", p, scale), p), f("multiply", f("divide", bcmax, scale), bcmis))
        real_pair = cmp(z, cst(4.0 * self.ulp), "GE")
        # Real eigenvalues: a rotation makes the block upper triangular.
        z3 = f("add", p, sign(f("multiply", f("sqrt", scale), f("sqrt", z)), p))
        a3 = f("add", d, z3)
        d3 = f("subtract", d, f("multiply", f("divide", bcmax, z3), bcmis))
        tau3 = f("sqrt", f("add", f("multiply", c, c), f("multiply", z3, z3)))
        cs3, sn3, b3 = f("divide", z3, tau3), f("divide", c, tau3), f("subtract", b, c)
        # Complex (or nearly equal real) eigenvalues: equalise the diagonal.
        sigma = f("add", b, c)
        tau4 = f("sqrt", f("add", f("multiply", sigma, sigma), f("multiply", temp, temp)))
        cs4 = f("sqrt", f("multiply", half, f("add", one, f("divide", f("abs", sigma), tau4))))
        sn4 = f("multiply", f("negate", f("divide", p, f("multiply", tau4, cs4))), sign(one, sigma))
        aa = f("add", f("multiply", a, cs4), f("multiply", b, sn4))
        bb = f("add", f("negate", f("multiply", a, sn4)), f("multiply", b, cs4))
        cc = f("add", f("multiply", c, cs4), f("multiply", d, sn4))
        dd = f("add", f("negate", f("multiply", c, sn4)), f("multiply", d, cs4))
        b4 = f("add", f("multiply", bb, cs4), f("multiply", dd, sn4))
        c4 = f("add", f("negate", f("multiply", aa, sn4)), f("multiply", cc, cs4))
        a4 = f("add", f("multiply", aa, cs4), f("multiply", cc, sn4))
        d4 = f("add", f("negate", f("multiply", bb, sn4)), f("multiply", dd, cs4))
        mid = f("multiply", half, f("add", a4, d4))
        # ... then, if the pair is real after all (b, c of one sign), triangularise.
        c4_nz, b4_nz = cmp(c4, zero, "NE"), cmp(b4, zero, "NE")
        same = f("and", f("and", c4_nz, b4_nz), cmp(sign(one, b4), sign(one, c4), "EQ"))
        sab, sac = f("sqrt", f("abs", b4)), f("sqrt", f("abs", c4))
        p5 = sign(f("multiply", sab, sac), c4)
        tau5 = f("divide", one, f("sqrt", f("abs", f("add", b4, c4))))
        cs1, sn1 = f("multiply", sab, tau5), f("multiply", sac, tau5)
        cs5 = f("subtract", f("multiply", cs4, cs1), f("multiply", sn4, sn1))
        sn5 = f("add", f("multiply", cs4, sn1), f("multiply", sn4, cs1))
        flip = f("and", c4_nz, f("not", b4_nz))  # b = 0: swap to b = -c, c = 0
        a_4 = sel(same, f("add", mid, p5), mid)
        d_4 = sel(same, f("subtract", mid, p5), mid)
        b_4 = sel(same, f("subtract", b4, c4), sel(flip, f("negate", c4), b4))
        c_4 = sel(f("or", same, flip), zero, c4)
        cs_4 = sel(same, cs5, sel(flip, f("negate", sn4), cs4))
        sn_4 = sel(same, sn5, sel(flip, cs4, sn4))

        def pick(v0, v1, v2, v3, v4):
            return sel(c_zero, v0, sel(b_zero, v1, sel(standard, v2, sel(real_pair, v3, v4))))

        cs = pick(one, zero, one, cs3, cs_4)
        sn = pick(zero, one, zero, sn3, sn_4)
        return (cs, sn, pick(a, d, a, a3, a_4), pick(b, f("negate", c), b, b3, b_4),
                pick(c, zero, c, zero, c_4), pick(d, a, d, d3, d_4))

    def triangularise(self, a, b, c, d, lam=None):
        """A unitary G = [[g11, g12], [g21, g22]] with G^H [[a, b], [c, d]] G upper
        triangular, lam (or the eigenvalue far from d) first; identity when c = 0."""
        f, cst, sel = self.f, self.c, self.sel
        if lam is None:
            half = f("multiply", cst(0.5), f("subtract", a, d))
            disc = f("sqrt", f("add", f("multiply", half, half), f("multiply", b, c)))
            plus, minus = f("add", half, disc), f("subtract", half, disc)
            x1 = sel(self.cmp(self.mag(plus), self.mag(minus), "GE"), plus, minus)
        else:
            x1 = f("subtract", lam, d)
        c_zero = self.cmp(self.mag(c), cst(0.0, self.sr), "EQ")
        x1 = sel(c_zero, cst(1.0), x1)
        x2 = sel(c_zero, cst(0.0), c)
        norm = f("sqrt", f("add", f("multiply", self.mag(x1), self.mag(x1)), f("multiply", self.mag(x2), self.mag(x2))))
        norm = self.as_elem(norm)
        g11, g21 = f("divide", x1, norm), f("divide", x2, norm)
        return g11, f("negate", _conj(self.e, g21, self.sc)), g21, _conj(self.e, g11, self.sc)

    def rotate(self, h, z, p, g, size, z_rows):
        """G^H on rows p, p+1 of h, G on its columns p, p+1 and on z's."""
        e, f = self.e, self.f
        g11, g12, g21, g22 = g
        zero_i = self.x.zero_i

        def combine(u, w, ga, gb, conj):
            t = e.types[u]
            ga, gb = (_conj(e, ga, self.sc), _conj(e, gb, self.sc)) if conj else (ga, gb)
            return f("add", f("multiply", self.x.full(ga, t), u), f("multiply", self.x.full(gb, t), w))

        def sl(m, start, sizes):
            t = tensor_type(sizes, self.elem)
            return e.op("stablehlo.slice", [m], t, f"start_indices = {i64_array(start)}, "
                        f"limit_indices = {i64_array([s + d for s, d in zip(start, sizes)])}, "
                        f"strides = {i64_array([1, 1])}")

        rows = e.op("stablehlo.dynamic_slice", [h, p, zero_i], tensor_type([2, size], self.elem),
                    f"slice_sizes = {i64_array([2, size])}")
        up, down = sl(rows, [0, 0], [1, size]), sl(rows, [1, 0], [1, size])
        rows = self.concat([combine(up, down, g11, g21, True), combine(up, down, g12, g22, True)], 0,
                           tensor_type([2, size], self.elem))
        h = e.op("stablehlo.dynamic_update_slice", [h, rows, p, zero_i], e.types[h])

        def columns(m, count):
            cols = e.op("stablehlo.dynamic_slice", [m, zero_i, p], tensor_type([count, 2], self.elem),
                        f"slice_sizes = {i64_array([count, 2])}")
            left, right = sl(cols, [0, 0], [count, 1]), sl(cols, [0, 1], [count, 1])
            cols = self.concat([combine(left, right, g11, g21, False), combine(left, right, g12, g22, False)], 1,
                               tensor_type([count, 2], self.elem))
            return e.op("stablehlo.dynamic_update_slice", [m, cols, zero_i, p], e.types[m])

        return columns(h, size), columns(z, z_rows)

    def block(self, h, p, a, b, c, d):
        flat = self.concat([a, b, c, d], 1, self.x.type(1, 4))
        blk = self.e.op("stablehlo.reshape", [flat], self.x.type(2, 2))
        return self.e.op("stablehlo.dynamic_update_slice", [h, blk, p, p], self.e.types[h])

    # -- the iteration
    def run(self, h0: str, z0: str) -> tuple[str, str, str]:
        """(T, Z, info) of the [n, n] Hessenberg h0 and the [n, n] z0 it came with."""
        e, x, s, N, n = self.e, self.x, self.s, self.N, self.n
        zero_e = e.constant(self.zero, tensor_type([], self.elem))
        hp = e.op("stablehlo.pad", [h0, zero_e], x.t, "edge_padding_low = array<i64: 0, 0>, "
                  f"edge_padding_high = array<i64: {N - n}, {N - n}>, interior_padding = array<i64: 0, 0>")
        z_t = tensor_type([n, N], self.elem)
        zp = e.op("stablehlo.pad", [z0, zero_e], z_t, "edge_padding_low = array<i64: 0, 0>, "
                  f"edge_padding_high = array<i64: 0, {N - n}>, interior_padding = array<i64: 0, 0>")
        ti = "tensor<i64>"
        cap = self.i(30 * max(10, n))
        zero_i, one_i = self.i(0), self.i(1)
        types = f"{x.t}, {z_t}, {ti}, {ti}, {ti}"
        w = e.fresh()
        e.line(f"{w}:5 = scf.while ({w}h = {hp}, {w}z = {zp}, {w}hi = {self.i(n - 1)}, {w}its = {zero_i}, "
               f"{w}tot = {zero_i}) : ({types}) -> ({types}) {{")
        e.types.update({f"{w}h": x.t, f"{w}z": z_t, f"{w}hi": ti, f"{w}its": ti, f"{w}tot": ti})
        go = self.f("and", self.cmp(f"{w}hi", zero_i, "GE"), self.cmp(f"{w}tot", cap, "LT"))
        e.line(f"scf.condition({self.bool_(go)}) {w}h, {w}z, {w}hi, {w}its, {w}tot : {types}")
        e.line("} do {")
        b = e.fresh()
        e.line(f"^bb0({b}h: {x.t}, {b}z: {z_t}, {b}hi: {ti}, {b}its: {ti}, {b}tot: {ti}):")
        e.types.update({f"{b}h": x.t, f"{b}z": z_t, f"{b}hi": ti, f"{b}its": ti, f"{b}tot": ti})
        h, z, hi, its, tot = (f"{b}{k}" for k in ("h", "z", "hi", "its", "tot"))

        # The last negligible subdiagonal entry H[l, l-1] at or above row hi (l = 0: none).
        vec_r = tensor_type([N], self.part)
        diag = linalg_ops._diagonal(e, h, x.cmp(s.rows, s.cols, "EQ"), [N, N], self.elem)
        cols1 = e.op("stablehlo.add", [s.cols, e.constant("1", x.type(N, N, "i64"))], x.type(N, N, "i64"))
        sub = linalg_ops._diagonal(e, h, x.cmp(s.rows, cols1, "EQ"), [N, N], self.elem)  # H[i, i-1]
        ad, asub = self.f("abs", diag, t=vec_r), self.f("abs", sub, t=vec_r)
        prev = e.op("stablehlo.pad", [e.op("stablehlo.slice", [ad], tensor_type([N - 1], self.part),
                                           f"start_indices = {i64_array([0])}, limit_indices = {i64_array([N - 1])}, "
                                           f"strides = {i64_array([1])}"),
                                      e.constant("0.0", tensor_type([], self.part))], vec_r,
                    "edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 0>, "
                    "interior_padding = array<i64: 0>")
        bound = self.f("multiply", e.constant(repr(self.ulp), vec_r), self.f("add", prev, ad))
        small = self.f("or", self.cmp(asub, bound, "LE"),
                       self.cmp(asub, e.constant(repr(self.tiny * n / self.ulp), vec_r), "LE"))
        idx_t = tensor_type([N], "i64")
        hi_v = e.op("stablehlo.broadcast_in_dim", [hi], idx_t, "broadcast_dimensions = array<i64>")
        cand = self.f("and", small, self.f("and", self.cmp(self.idx, e.constant("1", idx_t), "GE"),
                                           self.cmp(self.idx, hi_v, "LE")))
        lo = _reduce(e, self.sel(cand, self.idx, e.constant("0", idx_t)), [0], ti, "i64", "stablehlo.maximum", "0")
        at = self.f("and", x.cmp(s.rows, self.x.scalar_at(lo, N, N), "EQ"),
                    x.cmp(cols1, self.x.scalar_at(lo, N, N), "EQ"))
        h = self.sel(at, e.constant(self.zero, x.t), h)

        # Three cases, all computed and one selected (scf.if on tensors would leave
        # buffers whose ownership the deallocation passes can only track at run time):
        # a 1x1 block split off, a 2x2 block split off, or a sweep (an empty loop when
        # it is not the case).
        hi1, hi2 = self.f("subtract", hi, one_i), self.f("subtract", hi, self.i(2))
        one, two = self.cmp(lo, hi, "EQ"), self.cmp(lo, hi1, "EQ")
        chase = self.f("not", self.f("or", one, two))
        h2, z2 = self.two_by_two(h, z, hi1, hi)
        h3, z3 = self.sweep(h, z, lo, hi, its, end=self.sel(chase, hi, lo))

        def pick(mask, a, b):
            return self.sel(e.op("stablehlo.broadcast_in_dim", [mask], tensor_type(self.dims(a), "i1"),
                                 "broadcast_dimensions = array<i64>"), a, b)

        h_next = pick(two, h2, pick(chase, h3, h))
        z_next = pick(two, z2, pick(chase, z3, z))
        hi_next = self.sel(one, hi1, self.sel(two, hi2, hi))
        its_next = self.sel(chase, self.f("add", its, one_i), zero_i)
        tot_next = self.sel(chase, self.f("add", tot, one_i), tot)
        e.line(f"scf.yield {h_next}, {z_next}, {hi_next}, {its_next}, {tot_next} : {types}")
        e.line("}")
        for k, t in enumerate((x.t, z_t, ti, ti, ti)):
            e.types[f"{w}#{k}"] = t
        info = e.op("stablehlo.convert", [self.sel(self.cmp(f"{w}#2", zero_i, "GE"),
                                                   self.f("add", f"{w}#2", one_i), zero_i)], "tensor<i32>")
        t_n = tensor_type([n, n], self.elem)
        lim = f"limit_indices = {i64_array([n, n])}, strides = {i64_array([1, 1])}"
        t_out = e.op("stablehlo.slice", [f"{w}#0"], t_n, f"start_indices = {i64_array([0, 0])}, {lim}")
        z_out = e.op("stablehlo.slice", [f"{w}#1"], t_n, f"start_indices = {i64_array([0, 0])}, {lim}")
        return t_out, z_out, info

    def two_by_two(self, h, z, p, q):
        a, b, c, d = self.get(h, p, p), self.get(h, p, q), self.get(h, q, p), self.get(h, q, q)
        if self.cplx:
            g = self.triangularise(a, b, c, d)
            h, z = self.rotate(h, z, p, g, self.N, self.n)
            return self.e.op("stablehlo.dynamic_update_slice", [h, self.c(0.0), q, p], self.x.t), z
        cs, sn, a, b, c, d = self.lanv2(a, b, c, d)
        h, z = self.rotate(h, z, p, (cs, self.f("negate", sn), sn, cs), self.N, self.n)
        return self.block(h, p, a, b, c, d), z

    def sweep(self, h, z, lo, hi, its, end=None):
        """One Francis double-shift step on the active block lo..hi (at least 3x3); the
        bulge loop runs from lo to `end` (hi, or lo for no step)."""
        e, f, cst, sel, x, N, n = self.e, self.f, self.c, self.sel, self.x, self.N, self.n
        one_i = self.i(1)
        hi1, hi2 = f("subtract", hi, one_i), f("subtract", hi, self.i(2))
        h11, h12, h21, h22 = self.get(h, hi1, hi1), self.get(h, hi1, hi), self.get(h, hi, hi1), self.get(h, hi, hi)
        # Every tenth step, an exceptional shift breaks a cycle, as ?lahqr does.
        ten = self.i(10)
        exceptional = f("and", self.cmp(its, self.i(0), "GT"),
                        self.cmp(f("remainder", its, ten), self.i(0), "EQ"))
        exc = e.op("stablehlo.broadcast_in_dim", [exceptional], x.type(1, 1, "i1"), "broadcast_dimensions = array<i64>")
        big = self.as_elem(f("add", self.mag(h21), self.mag(self.get(h, hi1, hi2))))
        e11 = f("add", f("multiply", cst(0.75), big), h22)
        h11, h12 = sel(exc, e11, h11), sel(exc, f("multiply", cst(-0.4375), big), h12)
        h21, h22 = sel(exc, big, h21), sel(exc, e11, h22)
        zero_r = cst(0.0, self.sr)
        if self.cplx:
            half = f("multiply", cst(0.5), f("subtract", h11, h22))
            disc = f("sqrt", f("add", f("multiply", half, half), f("multiply", h12, h21)))
            tr = f("multiply", cst(0.5), f("add", h11, h22))
            rt1r, rt2r, rt1i, rt2i = f("add", tr, disc), f("subtract", tr, disc), zero_r, zero_r
        else:
            total = f("add", f("add", f("abs", h11), f("abs", h12)), f("add", f("abs", h21), f("abs", h22)))
            scale = sel(self.cmp(total, zero_r, "EQ"), cst(1.0), total)
            a11, a12, a21, a22 = (f("divide", v, scale) for v in (h11, h12, h21, h22))
            tr = f("multiply", cst(0.5), f("add", a11, a22))
            det = f("subtract", f("multiply", f("subtract", a11, tr), f("subtract", a22, tr)), f("multiply", a12, a21))
            rtdisc = f("sqrt", f("abs", det))
            pair = self.cmp(det, zero_r, "GE")
            r1, r2 = f("add", tr, rtdisc), f("subtract", tr, rtdisc)
            # Two real shifts: both the one nearer h22.
            near = sel(self.cmp(f("abs", f("subtract", r1, a22)), f("abs", f("subtract", r2, a22)), "LE"), r1, r2)
            rt1r = f("multiply", sel(pair, tr, near), scale)
            rt2r = rt1r
            rt1i = sel(pair, f("multiply", rtdisc, scale), zero_r)
            rt2i = f("negate", rt1i)
        # The first column of (H - s1)(H - s2) at row lo, scaled.
        lo1, lo2 = f("add", lo, one_i), f("add", lo, self.i(2))
        hmm, hm1m, hmm1 = self.get(h, lo, lo), self.get(h, lo1, lo), self.get(h, lo, lo1)
        hm1m1, hm2m1 = self.get(h, lo1, lo1), self.get(h, lo2, lo1)
        sm = f("add", f("add", self.mag(f("subtract", hmm, rt2r)), f("abs", rt2i)), self.mag(hm1m))
        sm = self.as_elem(sel(self.cmp(sm, zero_r, "EQ"), cst(1.0, self.sr), sm))
        h21s = f("divide", hm1m, sm)
        v1 = f("add", f("multiply", h21s, hmm1),
               f("multiply", f("subtract", hmm, rt1r), f("divide", f("subtract", hmm, rt2r), sm)))
        if not self.cplx:
            v1 = f("subtract", v1, f("multiply", rt1i, f("divide", rt2i, sm)))
        v2 = f("multiply", h21s, f("subtract", f("subtract", f("add", hmm, hm1m1), rt1r), rt2r))
        v3 = f("multiply", h21s, hm2m1)
        sv = f("add", f("add", self.mag(v1), self.mag(v2)), self.mag(v3))
        sv = self.as_elem(sel(self.cmp(sv, zero_r, "EQ"), cst(1.0, self.sr), sv))
        col3 = x.type(3, 1)
        v0 = self.concat([f("divide", v, sv) for v in (v1, v2, v3)], 0, col3)

        # The bulge chase: k = lo .. hi-1, reflectors of rows k..k+2 (k..k+1 at the end).
        z_t = e.types[z]
        types = f"{x.t}, {z_t}"
        loop, kv = e.fresh(), e.fresh()
        e.line(f"{loop}:2 = scf.for {kv} = {self.index(lo)} to {self.index(end or hi)} step {self._c1()} "
               f"iter_args({loop}h = {h}, {loop}z = {z}) -> ({types}) {{")
        e.types.update({f"{loop}h": x.t, f"{loop}z": z_t})
        raw, k = e.fresh(), e.fresh()
        e.line(f"{raw} = arith.index_cast {kv} : index to i64")
        e.line(f"{k} = tensor.from_elements {raw} : tensor<i64>", **{k[1:]: "tensor<i64>"})
        sh, sz = f"{loop}h", f"{loop}z"
        km1 = f("subtract", k, one_i)
        first = self.cmp(k, lo, "EQ")
        last = self.cmp(k, hi1, "EQ")
        bulge = e.op("stablehlo.dynamic_slice", [sh, k, km1], col3, f"slice_sizes = {i64_array([3, 1])}")
        def full3(m, t):
            return e.op("stablehlo.broadcast_in_dim", [m], t, "broadcast_dimensions = array<i64>")

        v = sel(full3(first, x.type(3, 1, "i1")), v0, bulge)
        row2 = self.cmp(self.rows3, e.constant("2", tensor_type([3, 1], "i64")), "EQ")
        zeros3 = e.constant(self.zero, col3)
        v = sel(f("and", row2, full3(last, x.type(3, 1, "i1"))), zeros3, v)
        alpha = e.op("stablehlo.slice", [v], x.type(1, 1), f"start_indices = {i64_array([0, 0])}, "
                     f"limit_indices = {i64_array([1, 1])}, strides = {i64_array([1, 1])}")
        below = self.cmp(self.rows3, e.constant("1", tensor_type([3, 1], "i64")), "GE")
        tail = sel(below, v, zeros3)
        beta, tau, scale = self.s.larfg(alpha, tail, length=3)
        u = sel(below, f("multiply", tail, x.full(scale, col3)),
                sel(self.cmp(self.rows3, e.constant("0", tensor_type([3, 1], "i64")), "EQ"),
                    e.constant(self.one, col3), zeros3))
        uc = _conj(e, u, col3)
        # From the left, rows k..k+2, columns k and after: R -= conj(tau) u (u^H R).
        strip_t = x.type(3, N)
        rows = e.op("stablehlo.dynamic_slice", [sh, k, x.zero_i], strip_t, f"slice_sizes = {i64_array([3, N])}")
        wrow = x.sum_rows(f("multiply", x.full(uc, strip_t), rows), 3, N)
        upd = f("multiply", x.full(f("multiply", u, x.full(_conj(e, tau, self.sc), col3)), strip_t),
                x.full(wrow, strip_t))
        k_strip = x.full(e.op("stablehlo.reshape", [k], x.type(1, 1, "i64")), x.type(3, N, "i64"))
        rows = sel(self.cmp(self.cols3, k_strip, "GE"), f("subtract", rows, upd), rows)
        # Column k-1 holds the bulge just reduced: (beta, 0, 0), as LAPACK stores it.
        km1_strip = f("subtract", k_strip, e.constant("1", x.type(3, N, "i64")))
        fix = f("and", self.cmp(self.cols3, km1_strip, "EQ"), full3(f("not", first), x.type(3, N, "i1")))
        beta_col = sel(self.cmp(self.rows3, e.constant("0", tensor_type([3, 1], "i64")), "EQ"),
                       x.full(beta, col3), zeros3)
        rows = sel(fix, x.full(beta_col, strip_t), rows)
        sh = e.op("stablehlo.dynamic_update_slice", [sh, rows, k, x.zero_i], x.t)

        def right(m, count):
            # Columns k..k+2 of every row: C -= tau (C u) u^H.
            t = tensor_type([count, 3], self.elem)
            cols = e.op("stablehlo.dynamic_slice", [m, x.zero_i, k], t, f"slice_sizes = {i64_array([count, 3])}")
            u_row = e.op("stablehlo.reshape", [u], x.type(1, 3))
            total = _reduce(e, f("multiply", cols, x.full(u_row, t)), [1], tensor_type([count], self.elem),
                            self.elem, "stablehlo.add", self.zero)
            y = e.op("stablehlo.reshape", [total], tensor_type([count, 1], self.elem))
            y = f("multiply", y, x.full(tau, e.types[y]))
            upd = f("multiply", x.full(y, t), x.full(_conj(e, u_row, x.type(1, 3)), t))
            return e.op("stablehlo.dynamic_update_slice", [m, f("subtract", cols, upd), x.zero_i, k], e.types[m])

        sh, sz = right(sh, N), right(sz, n)
        e.line(f"scf.yield {sh}, {sz} : {types}")
        e.line("}")
        e.types[f"{loop}#0"], e.types[f"{loop}#1"] = x.t, z_t
        return f"{loop}#0", f"{loop}#1"

    def _c1(self) -> str:
        name = self.e.fresh()
        self.e.line(f"{name} = arith.constant 1 : index")
        return name


def _eigenvalues_real(e: Emitter, sch: _Schur, t: str) -> tuple[str, str]:
    """(wr, wi) of a real quasi-triangular T in standard form: a 2x2 block [[a, b], [c,
    a]] holds a +- i sqrt(|b|) sqrt(|c|), the positive imaginary part first."""
    n, part = sch.n, sch.part
    xn = sch.xn
    rows, cols = xn.iota(0, n, n), xn.iota(1, n, n)
    one = e.constant("1", xn.type(n, n, "i64"))
    vec = tensor_type([n], part)

    def along(mask, dim):  # the masked entries summed across `dim`
        return _reduce(e, sch.sel(mask, t, e.constant("-0.0", xn.t)), [dim], vec, part, "stablehlo.add", "-0.0")

    wr = linalg_ops._diagonal(e, t, xn.cmp(rows, cols, "EQ"), [n, n], part)
    below = xn.cmp(rows, e.op("stablehlo.add", [cols, one], xn.type(n, n, "i64")), "EQ")  # T[j+1, j]
    above = xn.cmp(cols, e.op("stablehlo.add", [rows, one], xn.type(n, n, "i64")), "EQ")  # T[i, i+1]
    sub_next, sup_next = along(below, 0), along(above, 1)  # T[i+1, i], T[i, i+1] at i
    sub_prev, sup_prev = along(below, 1), along(above, 0)  # T[i, i-1], T[i-1, i] at i

    def size(sub, sup):
        return e.op("stablehlo.multiply", [e.op("stablehlo.sqrt", [e.op("stablehlo.abs", [sup], vec)], vec),
                                           e.op("stablehlo.sqrt", [e.op("stablehlo.abs", [sub], vec)], vec)], vec)

    zero = e.constant("0.0", vec)
    wi = sch.sel(sch.cmp(sub_next, zero, "NE"), size(sub_next, sup_next),
                 sch.sel(sch.cmp(sub_prev, zero, "NE"), e.op("stablehlo.negate", [size(sub_prev, sup_prev)], vec),
                         zero))
    return wr, wi


def _complex_schur(e: Emitter, sch: _Schur, t: str, z: str, wr: str, wi: str) -> tuple[str, str]:
    """The real Schur form made complex: each 2x2 block triangular by a complex
    rotation, wr[p] + i wi[p] first on the diagonal."""
    n, part = sch.n, sch.part
    ct = f"complex<{part}>"
    sc = _Schur(e, n, ct)
    tc, zc = sc.cplx_of(t), sc.cplx_of(z)
    w = e.op("stablehlo.complex", [wr, wi], tensor_type([n], ct))
    if n < 2:
        return tc, zc
    types = f"{e.types[tc]}, {e.types[zc]}"
    loop, pv = e.fresh(), e.fresh()
    c0, cn = e.fresh(), e.fresh()
    e.line(f"{c0} = arith.constant 0 : index")
    e.line(f"{cn} = arith.constant {n - 1} : index")
    e.line(f"{loop}:2 = scf.for {pv} = {c0} to {cn} step {sc._c1()} iter_args({loop}t = {tc}, {loop}z = {zc}) "
           f"-> ({types}) {{")
    e.types.update({f"{loop}t": e.types[tc], f"{loop}z": e.types[zc]})
    raw, p = e.fresh(), e.fresh()
    e.line(f"{raw} = arith.index_cast {pv} : index to i64")
    e.line(f"{p} = tensor.from_elements {raw} : tensor<i64>", **{p[1:]: "tensor<i64>"})
    q = sc.f("add", p, sc.i(1))
    m = f"{loop}t"
    a, b, c, d = sc.get(m, p, p), sc.get(m, p, q), sc.get(m, q, p), sc.get(m, q, q)
    lam = e.op("stablehlo.reshape", [e.op("stablehlo.dynamic_slice", [w, p], tensor_type([1], ct),
                                          "slice_sizes = array<i64: 1>")], sc.sc)
    g = sc.triangularise(a, b, c, d, lam)
    # The rotation needs n rows and columns here: no padding, so rotate() slices [2, n].
    tn, zn = sc.rotate(m, f"{loop}z", p, g, n, n)
    pair = e.op("stablehlo.broadcast_in_dim", [sc.cmp(sc.mag(c), sc.c(0.0, sc.sr), "NE")],
                tensor_type([n, n], "i1"), "broadcast_dimensions = array<i64: 0, 1>")
    blk = sc.block(tn, p, lam, sc.get(tn, p, q), sc.c(0.0), _conj(e, lam, sc.sc))
    tn = sc.sel(pair, blk, m)
    zn = sc.sel(pair, zn, f"{loop}z")
    e.line(f"scf.yield {tn}, {zn} : {types}")
    e.line("}")
    e.types[f"{loop}#0"], e.types[f"{loop}#1"] = e.types[tc], e.types[zc]
    return f"{loop}#0", f"{loop}#1"


def _eigenvectors(e: Emitter, sc: _Schur, t: str, z: str, left: bool = False) -> str:
    """Eigenvectors of A = Z T Z^H, T complex upper triangular, as ?trevc: right, X[:, j]
    solves (T - T[j, j]) x = 0 with x[j] = 1, row by row from the bottom; left (u^H A =
    lambda u^H), (T - T[j, j])^H x = 0, row by row from the top. A tiny divisor is
    replaced by smin. Then V = Z X, each column of unit norm with its largest component
    real and positive."""
    n, ct, part = sc.n, sc.elem, sc.part
    xn = sc.xn
    mat, row_t = xn.t, xn.type(1, n)
    rows, cols = xn.iota(0, n, n), xn.iota(1, n, n)
    cols_row = xn.iota(1, 1, n)
    diag = e.op("stablehlo.reshape", [linalg_ops._diagonal(e, t, xn.cmp(rows, cols, "EQ"), [n, n], ct)], row_t)
    size = e.op("stablehlo.abs", [diag], xn.type(1, n, part))
    smin = e.op("stablehlo.maximum", [e.op("stablehlo.multiply", [e.constant(repr(sc.ulp), xn.type(1, n, part)), size],
                                           xn.type(1, n, part)),
                                      e.constant(repr(sc.tiny * n / sc.ulp), xn.type(1, n, part))], xn.type(1, n, part))
    loop, iv = e.fresh(), e.fresh()
    c0, cn, last = e.fresh(), e.fresh(), e.fresh()
    e.line(f"{c0} = arith.constant 0 : index")
    e.line(f"{cn} = arith.constant {n} : index")
    e.line(f"{last} = arith.constant {n - 1} : index")
    e.line(f"{loop} = scf.for {iv} = {c0} to {cn} step {sc._c1()} iter_args({loop}x = {e.constant('(0.0, 0.0)', mat)}) "
           f"-> ({mat}) {{")
    e.types[f"{loop}x"] = mat
    down, raw, i = e.fresh(), e.fresh(), e.fresh()
    e.line(f"{down} = arith.subi {last}, {iv} : index")
    e.line(f"{raw} = arith.index_cast {iv if left else down} : index to i64")
    e.line(f"{i} = tensor.from_elements {raw} : tensor<i64>", **{i[1:]: "tensor<i64>"})
    i_row = xn.scalar_at(i, 1, n)
    # The vectors j whose entry i this step computes, and the entries T[i, k] (k > i),
    # or conj(T[k, i]) (k < i), that enter it.
    after = xn.cmp(cols_row, i_row, "LT" if left else "GT")
    if left:
        col = _conj(e, e.op("stablehlo.dynamic_slice", [t, xn.zero_i, i], xn.type(n, 1),
                            f"slice_sizes = {i64_array([n, 1])}"), xn.type(n, 1))
        col = sc.sel(xn.cmp(xn.iota(0, n, 1), xn.scalar_at(i, n, 1), "LT"), col,
                     e.constant("(0.0, 0.0)", xn.type(n, 1)))
    else:
        row = e.op("stablehlo.dynamic_slice", [t, i, xn.zero_i], row_t, f"slice_sizes = {i64_array([1, n])}")
        row = sc.sel(after, row, e.constant("(0.0, 0.0)", row_t))
        col = e.op("stablehlo.reshape", [row], xn.type(n, 1))
    acc = xn.sum_rows(e.op("stablehlo.multiply", [xn.full(col, mat), f"{loop}x"], mat), n, n)
    tii = xn.full(xn.slice(t, i, i, 1, 1), row_t)
    denom = e.op("stablehlo.subtract", [tii, diag], row_t)
    if left:
        denom = _conj(e, denom, row_t)
    tiny = xn.cmp(e.op("stablehlo.abs", [denom], xn.type(1, n, part)), smin, "LT")
    denom = sc.sel(tiny, e.op("stablehlo.complex", [smin, e.constant("0.0", xn.type(1, n, part))], row_t), denom)
    xi = sc.sel(after, e.op("stablehlo.negate", [e.op("stablehlo.divide", [acc, denom], row_t)], row_t),
                sc.sel(xn.cmp(cols_row, i_row, "EQ"), e.constant("(1.0, 0.0)", row_t), e.constant("(0.0, 0.0)", row_t)))
    nxt = e.op("stablehlo.dynamic_update_slice", [f"{loop}x", xi, i, xn.zero_i], mat)
    e.line(f"scf.yield {nxt} : {mat}")
    e.line("}")
    e.types[loop] = mat
    v = e.op("stablehlo.dot_general", [z, loop], mat,
             "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], "
             "rhs_contracting_dimensions = [0]>")
    real_t = xn.type(n, n, part)
    re, im = e.op("stablehlo.real", [v], real_t), e.op("stablehlo.imag", [v], real_t)
    sq = e.op("stablehlo.add", [e.op("stablehlo.multiply", [re, re], real_t),
                                e.op("stablehlo.multiply", [im, im], real_t)], real_t)
    norm = e.op("stablehlo.sqrt", [xn.sum_rows(sq, n, n, part)], xn.type(1, n, part))
    zero_r = e.constant("0.0", xn.type(1, n, part))
    norm = sc.sel(xn.cmp(norm, zero_r, "EQ"), e.constant("1.0", xn.type(1, n, part)), norm)
    v = e.op("stablehlo.divide", [v, xn.full(e.op("stablehlo.complex", [norm, zero_r], row_t), mat)], mat)
    largest = e.op("stablehlo.reshape", [_reduce(e, sq, [0], tensor_type([n], part), part, "stablehlo.maximum",
                                                 "0xFF800000" if part == "f32" else "0xFFF0000000000000")],
                   xn.type(1, n, part))
    hit = xn.cmp(sq, xn.full(largest, real_t), "EQ")
    first = _reduce(e, sc.sel(hit, rows, e.constant(str(n), xn.type(n, n, "i64"))), [0], tensor_type([n], "i64"),
                    "i64", "stablehlo.minimum", str(n))
    at = xn.cmp(rows, xn.full(e.op("stablehlo.reshape", [first], xn.type(1, n, "i64")), xn.type(n, n, "i64")), "EQ")
    comp = xn.sum_rows(sc.sel(at, v, e.constant("(0.0, 0.0)", mat)), n, n)
    mag = e.op("stablehlo.abs", [comp], xn.type(1, n, part))
    phase = sc.sel(xn.cmp(mag, zero_r, "EQ"), e.constant("(1.0, 0.0)", row_t),
                   e.op("stablehlo.divide", [_conj(e, comp, row_t),
                                             e.op("stablehlo.complex", [mag, zero_r], row_t)], row_t))
    v = e.op("stablehlo.multiply", [v, xn.full(phase, mat)], mat)
    real_only = e.op("stablehlo.complex", [e.op("stablehlo.real", [v], real_t), e.constant("0.0", real_t)], mat)
    return sc.sel(at, real_only, v)


def _hessenberg(e: Emitter, a3: str, b: int, n: int, elem: str) -> tuple[str, str]:
    """(H, Q) of the [B, n, n] batch by the ?gehrd and ?orgqr rules."""
    code = _CODE[elem]
    x = _Matrix(e, [b, n, n], elem)
    cplx = elem.startswith("complex")
    zero, one = ("(0.0, 0.0)", "(1.0, 0.0)") if cplx else ("0.0", "1.0")
    m = max(n - 1, 0)
    taus_t, info_t = tensor_type([b, m], elem), tensor_type([b], "i32")
    packed = e.fresh()
    e.line(f'{packed}:3 = "stablehlo.custom_call"({a3}) {{call_target_name = "lapack_{code}gehrd_ffi", '
           f"mhlo.backend_config = {{high = {n} : i32, low = 1 : i32}}}} : ({x.t}) -> ({x.t}, {taus_t}, {info_t})")
    e.types[f"{packed}#0"], e.types[f"{packed}#1"] = x.t, taus_t
    rows, cols = x.iota(0, n, n), x.iota(1, n, n)
    cols1 = e.op("stablehlo.add", [cols, e.constant("1", x.type(n, n, "i64"))], x.type(n, n, "i64"))
    h = e.op("stablehlo.select", [x.cmp(rows, cols1, "LE"), f"{packed}#0", e.constant(zero, x.t)], x.t)
    eye = e.op("stablehlo.select", [x.cmp(rows, cols, "EQ"), e.constant(one, x.t), e.constant(zero, x.t)], x.t)
    if n < 2:
        return h, eye
    small_t = tensor_type([b, m, m], elem)
    refl = e.op("stablehlo.slice", [f"{packed}#0"], small_t, f"start_indices = {i64_array([0, 1, 0])}, "
                f"limit_indices = {i64_array([b, n, m])}, strides = {i64_array([1, 1, 1])}")
    q = e.op("stablehlo.custom_call", [refl, f"{packed}#1"], small_t,
             f'call_target_name = "lapack_{code}{"ungqr" if cplx else "orgqr"}_ffi"')
    q = e.op("stablehlo.pad", [q, e.constant(zero, tensor_type([], elem))], x.t,
             f"edge_padding_low = {i64_array([0, 1, 1])}, edge_padding_high = {i64_array([0, 0, 0])}, "
             f"interior_padding = {i64_array([0, 0, 0])}")
    corner = e.op("stablehlo.and", [x.cmp(rows, e.constant("0", x.type(n, n, "i64")), "EQ"),
                                    x.cmp(cols, e.constant("0", x.type(n, n, "i64")), "EQ")], x.type(n, n, "i1"))
    return h, e.op("stablehlo.select", [corner, e.constant(one, x.t), q], x.t)


def _eigen(op, member, kinds: str) -> None:
    """Run `member(e, sch, t, z, info) -> values` on each matrix of the batch and return
    the values stacked into the op's results, whose kinds are `kinds`: per result, M
    (a matrix of A's type), C (a complex matrix), v (a vector of A's element type), r (of
    its real type), c (complex), i (an i32 per matrix)."""
    shape, elem = _square(op)
    batch, n = shape[:-2], shape[-1]
    part = _real_type(elem)
    ctype = f"complex<{part}>"
    want = [{"M": tensor_type(shape, elem), "C": tensor_type(shape, ctype), "v": tensor_type(batch + [n], elem),
             "r": tensor_type(batch + [n], part), "c": tensor_type(batch + [n], ctype),
             "i": tensor_type(batch, "i32")}[k] for k in kinds]
    _expect_results(op, want)
    b = int(math.prod(batch)) if batch else 1
    e = Emitter(a=tensor_type(shape, elem))
    a3 = e.op("stablehlo.reshape", ["%a"], tensor_type([b, n, n], elem))
    h, q = _hessenberg(e, a3, b, n, elem)
    sch = _Schur(e, n, elem)
    results = [str(r.type) for r in op.results]
    # Per result: the type of the flattened batch, the dimensions and element type of one member's.
    flat = []
    for k in kinds:
        dims = {"M": [n, n], "C": [n, n], "i": []}.get(k, [n])
        el = {"M": elem, "v": elem, "r": part, "i": "i32"}.get(k, ctype)
        flat.append((tensor_type([b] + dims, el), dims, el))
    zeros = [e.constant("0" if el == "i32" else ("(0.0, 0.0)" if "complex" in el else "0.0"), ft)
             for ft, _, el in flat]
    _loop_header(e, b, [(f"acc{k}", z0, ft) for k, (z0, (ft, _, _)) in enumerate(zip(zeros, flat))])
    mt = tensor_type([n, n], elem)
    hb = e.op("stablehlo.reshape", [e.op("stablehlo.dynamic_slice", [h, "%ki", sch.x.zero_i, sch.x.zero_i],
                                         tensor_type([1, n, n], elem), f"slice_sizes = {i64_array([1, n, n])}")], mt)
    zb = e.op("stablehlo.reshape", [e.op("stablehlo.dynamic_slice", [q, "%ki", sch.x.zero_i, sch.x.zero_i],
                                         tensor_type([1, n, n], elem), f"slice_sizes = {i64_array([1, n, n])}")], mt)
    t, z, info = sch.run(hb, zb)
    values = member(e, sch, t, z, info)
    updated = []
    for k, (value, (ft, dims, el)) in enumerate(zip(values, flat)):
        one = e.op("stablehlo.reshape", [value], tensor_type([1] + dims, el))
        starts = ["%ki"] + [sch.x.zero_i] * len(dims)
        updated.append(e.op("stablehlo.dynamic_update_slice", [f"%acc{k}", one, *starts], ft))
    e.line(f"scf.yield {', '.join(updated)} : {', '.join(ft for ft, _, _ in flat)}")
    e.line("}")
    outs = []
    for k, (ft, _, _) in enumerate(flat):
        e.types[f"%loop#{k}"] = ft
        outs.append(e.op("stablehlo.reshape", [f"%loop#{k}"], results[k]))
    e.line(f"return {', '.join(outs)} : {', '.join(results)}")
    _replace(op, e, ["a"])


def gees(op, config: dict) -> None:
    """Schur form A = Z T Z^H: T, Z (zeros for mode 'N'), the eigenvalues (real: wr, wi),
    sdim = 0 (no sorting) and info (0, or 1 + the last row whose eigenvalue did not
    converge in 30 max(10, n) steps)."""
    mode = _option(op, config, "mode", "VN", "V")
    if _option(op, config, "sort", "NS", "N") == "S":
        raise CompileError.at(op, f"custom_call @{_target(op)}: sorted Schur forms (sort = 'S') are not supported")
    _, elem = _square(op)

    def member(e, sch, t, z, info):
        if mode == "N":
            z = e.constant(sch.zero, e.types[z])
        sdim = e.constant("0", "tensor<i32>")
        if sch.cplx:
            w = linalg_ops._diagonal(e, t, sch.xn.cmp(sch.xn.iota(0, sch.n, sch.n), sch.xn.iota(1, sch.n, sch.n), "EQ"),
                                     [sch.n, sch.n], elem)
            return [t, z, w, sdim, info]
        wr, wi = _eigenvalues_real(e, sch, t)
        return [t, z, wr, wi, sdim, info]

    _eigen(op, member, "MMvii" if elem.startswith("complex") else "MMrrii")


def geev(op, config: dict) -> None:
    """Eigenvalues (real: wr, wi, pairs with the positive imaginary part first) and
    eigenvectors (complex, unit norm, largest component real), left (u^H A = lambda
    u^H) and right. Results: [wr, wi,] vl, vr (zeros when not asked for), info."""
    left = _option(op, config, "compute_left", "NV", "N") == "V"
    right = _option(op, config, "compute_right", "NV", "N") == "V"
    _, elem = _square(op)

    def member(e, sch, t, z, info):
        n = sch.n
        ct = elem if sch.cplx else f"complex<{elem}>"
        vl = e.constant("(0.0, 0.0)", tensor_type([n, n], ct))
        if sch.cplx:
            tc, zc = t, z
            w = linalg_ops._diagonal(e, t, sch.xn.cmp(sch.xn.iota(0, n, n), sch.xn.iota(1, n, n), "EQ"), [n, n], elem)
            sc = sch
        else:
            wr, wi = _eigenvalues_real(e, sch, t)
            tc, zc = _complex_schur(e, sch, t, z, wr, wi)
            sc = _Schur(e, n, ct)
        vr = _eigenvectors(e, sc, tc, zc) if right else vl
        if left:
            vl = _eigenvectors(e, sc, tc, zc, left=True)
        return ([w] if sch.cplx else [wr, wi]) + [vl, vr, info]

    _eigen(op, member, "vMMi" if elem.startswith("complex") else "rrCCi")


_ROUTINES.update(gees=gees, geev=geev)
