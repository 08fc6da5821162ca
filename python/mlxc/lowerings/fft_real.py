"""The real FFT (real -> half spectrum, and back) in the operation order of XLA's CPU
FFT library (ducc0's `rfftp` plans), so that results match XLA bit for bit.

Both transforms run over "lanes": one value per element of the transformed axis.
A value is anything with + - * and unary - that round once per operation in the
element type: numpy arrays (a batch of transforms evaluated at once) or the emitter
values of `fft_scalar`, which turn each operation into one StableHLO op. Constants
are numpy scalars of the element type; the code only adds, subtracts, multiplies
and negates, with ducc0's parenthesisation and operand pairing, because any other
order rounds differently.

The plan is ducc0's: n is factorized into 4s, then a single 2 moved to the front,
then odd primes in increasing order; factors 2, 3, 4, 5 have dedicated passes, other
primes the generic pass. Forward runs the passes from the last factor to the first,
backward from the first to the last, then every output is multiplied by fct unless
fct is 1. The data between passes is FFTPACK's "halfcomplex" order: r0, Re X1, Im X1,
Re X2, ... (and Re X[n/2] last for even n). ducc0 leaves these passes only for a
prime factor from 135 on (a Bluestein pass) or an even length above 1000 with a
factor above 5 or above 10000 (a complex transform of half the length);
`uses_radix_passes(n)` says which, and those lengths are refused here.

Bit-exact with jax 0.10.2 (XLA CPU, ducc0) for float32 and float64, forward (fct 1)
and backward (fct = 1/n rounded to the element type), for every length 1..134 and
the longer lengths tried (up to 19683, among them 1000, 1024, 8192, 10000); the test
(test/pytest/test_fft_real.py) covers 1..64 and a sample of longer ones.
"""

from __future__ import annotations

import numpy as np

from . import fft_complex
from .fft_roots import unity_roots

# ducc0 gives prime factors from this one on a Bluestein pass (a complex transform
# this module does not write).
_BLUESTEIN_PRIME = 135


def uses_radix_passes(n: int) -> bool:
    """Whether ducc0's real plan for length n is made of the radix passes alone
    (the plans this module reproduces)."""
    if n < 1:
        return False
    factors = factorize(n)
    # ducc0's rfftpass::make_pass: long even lengths with a factor above 5 (or very
    # long ones) go through a complex transform of half the length.
    if n > 1000 and n % 2 == 0 and (n > 10000 or max(factors) > 5):
        return False
    return all(f < _BLUESTEIN_PRIME for f in factors)


def factorize(n: int) -> list[int]:
    """ducc0's factor order for real transforms: 4s, a 2 moved to the front, odd
    primes ascending."""
    return fft_complex.factorize(n, leading=(4,))


def r2c(lanes, n: int, dtype, fct=None):
    """Forward real transform of n real values; returns the n//2 + 1 (re, im) pairs
    X[k] = fct * sum_j x[j] exp(-2 pi i j k / n) (fct None or 1: no multiplication).
    The imaginary parts of X[0] (and of X[n/2] for even n) are the numpy scalar
    dtype(0), which ducc0 stores there."""
    plan = _Plan(n, dtype)
    fct = plan.t(1 if fct is None else fct)
    res = list(lanes)
    if len(res) != n:
        raise ValueError(f"fft_real.r2c: {len(res)} lanes for a length-{n} transform")
    for l1, ido, ip in reversed(plan.passes):
        res = plan.forward(res, l1, ido, ip)
    if fct != 1:
        res = [v * fct for v in res]
    zero = plan.t(0)
    out = [(res[0], zero)]
    i = 1
    while i < n - 1:
        out.append((res[i], res[i + 1]))
        i += 2
    if i < n:
        out.append((res[i], zero))
    return out


def c2r(pairs, n: int, dtype, fct=None):
    """Backward real transform of the n//2 + 1 (re, im) pairs of a Hermitian
    spectrum; returns the n real values x[j] = fct * sum_k X[k] exp(2 pi i j k / n)
    over the whole spectrum (fct None or 1: no multiplication; XLA passes 1/n formed
    in double and rounded to dtype). The imaginary parts of X[0] and (n even) X[n/2]
    are not read, as in ducc0 (they may be None)."""
    plan = _Plan(n, dtype)
    fct = plan.t(1 if fct is None else fct)
    if len(pairs) != n // 2 + 1:
        raise ValueError(f"fft_real.c2r: {len(pairs)} pairs for a length-{n} transform "
                         f"(expected {n // 2 + 1})")
    res = [pairs[0][0]]
    for k in range(1, (n - 1) // 2 + 1):
        res += [pairs[k][0], pairs[k][1]]
    if n % 2 == 0 and n > 1:
        res.append(pairs[n // 2][0])
    for l1, ido, ip in plan.passes:
        res = plan.backward(res, l1, ido, ip)
    if fct != 1:
        res = [v * fct for v in res]
    return res


def _pm(c, d):
    return c + d, c - d


def _mulpm(c, d, e, f):
    """(a + ib) = conj(c + id) * (e + if), with ducc0's operand order."""
    return c * e + d * f, c * f - d * e


def _rearrange(rx, ix, ry, iy):
    """(x, y) -> (x + y, i (y - x)), as ducc0's radix-3 and -5 passes pair them."""
    return rx + ry, ix + iy, ix - iy, ry - rx


class _Plan:
    def __init__(self, n: int, dtype):
        if not uses_radix_passes(n):
            raise ValueError(f"fft_real: XLA's library transforms length {n} with a "
                             "Bluestein or complex plan, not the radix passes mirrored here")
        self.n = n
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"fft_real: element type {self.dtype} is not float32 or float64")
        self.t = self.dtype.type
        self.roots = unity_roots(n, self.dtype.name)
        self.passes = []
        l1 = 1
        for ip in factorize(n) if n > 1 else []:
            self.passes.append((l1, n // (ip * l1), ip))
            l1 *= ip

    def const(self, literal: str):
        """A constant as the C++ source spells it: a long double literal rounded to
        the element type."""
        return self.t(np.longdouble(literal))

    def twiddles(self, l1: int, ido: int, ip: int):
        """wa[(j-1)*(ido-1) + 2i-2], [.. + 2i-1] = re, im of root j*l1*i, as ducc0
        lays them out; WA(x, i) reads wa[i + x*(ido-1)]."""
        wa = [None] * ((ip - 1) * (ido - 1))
        for j in range(1, ip):
            for i in range(1, (ido - 1) // 2 + 1):
                re, im = self.roots[j * l1 * i]
                wa[(j - 1) * (ido - 1) + 2 * i - 2] = re
                wa[(j - 1) * (ido - 1) + 2 * i - 1] = im
        return wa

    def forward(self, cc, l1, ido, ip):
        fn = {2: _radf2, 3: _radf3, 4: _radf4, 5: _radf5}.get(ip, _radfg)
        return fn(self, cc, l1, ido, ip)

    def backward(self, cc, l1, ido, ip):
        fn = {2: _radb2, 3: _radb3, 4: _radb4, 5: _radb5}.get(ip, _radbg)
        return fn(self, cc, l1, ido, ip)


# Index maps: forward passes read CC(a, b, c) = cc[a + ido*(b + l1*c)] and write
# CH(a, b, c) = ch[a + ido*(b + ip*c)]; backward passes the other way round.

def _radf2(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + l1 * c)]
    H = lambda a, b, c: a + ido * (b + 2 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        ch[H(0, 0, k)], ch[H(ido - 1, 1, k)] = _pm(CC(0, k, 0), CC(0, k, 1))
    if ido % 2 == 0:
        for k in range(l1):
            ch[H(0, 1, k)] = -CC(ido - 1, k, 1)
            ch[H(ido - 1, 0, k)] = CC(ido - 1, k, 0)
    if ido <= 2:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, ti2 = _mulpm(WA(0, i - 2), WA(0, i - 1), CC(i - 1, k, 1), CC(i, k, 1))
            ch[H(i - 1, 0, k)], ch[H(ic - 1, 1, k)] = _pm(CC(i - 1, k, 0), tr2)
            ch[H(i, 0, k)], ch[H(ic, 1, k)] = _pm(ti2, CC(i, k, 0))
    return ch


def _radb2(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    t = p.t
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + 2 * c)]
    H = lambda a, b, c: a + ido * (b + l1 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        ch[H(0, k, 0)], ch[H(0, k, 1)] = _pm(CC(0, 0, k), CC(ido - 1, 1, k))
    if ido % 2 == 0:
        for k in range(l1):
            ch[H(ido - 1, k, 0)] = t(2) * CC(ido - 1, 0, k)
            ch[H(ido - 1, k, 1)] = t(-2) * CC(0, 1, k)
    if ido <= 2:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            ch[H(i - 1, k, 0)], tr2 = _pm(CC(i - 1, 0, k), CC(ic - 1, 1, k))
            ti2, ch[H(i, k, 0)] = _pm(CC(i, 0, k), CC(ic, 1, k))
            ch[H(i, k, 1)], ch[H(i - 1, k, 1)] = _mulpm(WA(0, i - 2), WA(0, i - 1), ti2, tr2)
    return ch


def _radf3(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    taur, taui = p.t(-0.5), p.const("0.8660254037844386467637231707529362")
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + l1 * c)]
    H = lambda a, b, c: a + ido * (b + 3 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        cr2 = CC(0, k, 1) + CC(0, k, 2)
        ch[H(0, 0, k)] = CC(0, k, 0) + cr2
        ch[H(0, 2, k)] = taui * (CC(0, k, 2) - CC(0, k, 1))
        ch[H(ido - 1, 1, k)] = CC(0, k, 0) + taur * cr2
    if ido == 1:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            dr2, di2 = _mulpm(WA(0, i - 2), WA(0, i - 1), CC(i - 1, k, 1), CC(i, k, 1))
            dr3, di3 = _mulpm(WA(1, i - 2), WA(1, i - 1), CC(i - 1, k, 2), CC(i, k, 2))
            dr2, di2, dr3, di3 = _rearrange(dr2, di2, dr3, di3)
            ch[H(i - 1, 0, k)] = CC(i - 1, k, 0) + dr2
            ch[H(i, 0, k)] = CC(i, k, 0) + di2
            tr2 = CC(i - 1, k, 0) + taur * dr2
            ti2 = CC(i, k, 0) + taur * di2
            tr3 = taui * dr3
            ti3 = taui * di3
            ch[H(i - 1, 2, k)], ch[H(ic - 1, 1, k)] = _pm(tr2, tr3)
            ch[H(i, 2, k)], ch[H(ic, 1, k)] = _pm(ti3, ti2)
    return ch


def _radb3(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    t = p.t
    taur, taui = t(-0.5), p.const("0.8660254037844386467637231707529362")
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + 3 * c)]
    H = lambda a, b, c: a + ido * (b + l1 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        tr2 = t(2) * CC(ido - 1, 1, k)
        cr2 = CC(0, 0, k) + taur * tr2
        ch[H(0, k, 0)] = CC(0, 0, k) + tr2
        ci3 = t(2) * taui * CC(0, 2, k)
        ch[H(0, k, 2)], ch[H(0, k, 1)] = _pm(cr2, ci3)
    if ido == 1:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2 = CC(i - 1, 2, k) + CC(ic - 1, 1, k)
            ti2 = CC(i, 2, k) - CC(ic, 1, k)
            cr2 = CC(i - 1, 0, k) + taur * tr2
            ci2 = CC(i, 0, k) + taur * ti2
            ch[H(i - 1, k, 0)] = CC(i - 1, 0, k) + tr2
            ch[H(i, k, 0)] = CC(i, 0, k) + ti2
            cr3 = taui * (CC(i - 1, 2, k) - CC(ic - 1, 1, k))
            ci3 = taui * (CC(i, 2, k) + CC(ic, 1, k))
            dr3, dr2 = _pm(cr2, ci3)
            di2, di3 = _pm(ci2, cr3)
            ch[H(i, k, 1)], ch[H(i - 1, k, 1)] = _mulpm(WA(0, i - 2), WA(0, i - 1), di2, dr2)
            ch[H(i, k, 2)], ch[H(i - 1, k, 2)] = _mulpm(WA(1, i - 2), WA(1, i - 1), di3, dr3)
    return ch


def _radf4(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    hsqt2 = p.const("0.707106781186547524400844362104849")
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + l1 * c)]
    H = lambda a, b, c: a + ido * (b + 4 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        tr1, ch[H(0, 2, k)] = _pm(CC(0, k, 3), CC(0, k, 1))
        tr2, ch[H(ido - 1, 1, k)] = _pm(CC(0, k, 0), CC(0, k, 2))
        ch[H(0, 0, k)], ch[H(ido - 1, 3, k)] = _pm(tr2, tr1)
    if ido % 2 == 0:
        for k in range(l1):
            ti1 = -hsqt2 * (CC(ido - 1, k, 1) + CC(ido - 1, k, 3))
            tr1 = hsqt2 * (CC(ido - 1, k, 1) - CC(ido - 1, k, 3))
            ch[H(ido - 1, 0, k)], ch[H(ido - 1, 2, k)] = _pm(CC(ido - 1, k, 0), tr1)
            ch[H(0, 3, k)], ch[H(0, 1, k)] = _pm(ti1, CC(ido - 1, k, 2))
    if ido <= 2:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            cr2, ci2 = _mulpm(WA(0, i - 2), WA(0, i - 1), CC(i - 1, k, 1), CC(i, k, 1))
            cr3, ci3 = _mulpm(WA(1, i - 2), WA(1, i - 1), CC(i - 1, k, 2), CC(i, k, 2))
            cr4, ci4 = _mulpm(WA(2, i - 2), WA(2, i - 1), CC(i - 1, k, 3), CC(i, k, 3))
            tr1, tr4 = _pm(cr4, cr2)
            ti1, ti4 = _pm(ci2, ci4)
            tr2, tr3 = _pm(CC(i - 1, k, 0), cr3)
            ti2, ti3 = _pm(CC(i, k, 0), ci3)
            ch[H(i - 1, 0, k)], ch[H(ic - 1, 3, k)] = _pm(tr2, tr1)
            ch[H(i, 0, k)], ch[H(ic, 3, k)] = _pm(ti1, ti2)
            ch[H(i - 1, 2, k)], ch[H(ic - 1, 1, k)] = _pm(tr3, ti4)
            ch[H(i, 2, k)], ch[H(ic, 1, k)] = _pm(tr4, ti3)
    return ch


def _radb4(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    t = p.t
    sqrt2 = p.const("1.414213562373095048801688724209698")
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + 4 * c)]
    H = lambda a, b, c: a + ido * (b + l1 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        tr2, tr1 = _pm(CC(0, 0, k), CC(ido - 1, 3, k))
        tr3 = t(2) * CC(ido - 1, 1, k)
        tr4 = t(2) * CC(0, 2, k)
        ch[H(0, k, 0)], ch[H(0, k, 2)] = _pm(tr2, tr3)
        ch[H(0, k, 3)], ch[H(0, k, 1)] = _pm(tr1, tr4)
    if ido % 2 == 0:
        for k in range(l1):
            ti1, ti2 = _pm(CC(0, 3, k), CC(0, 1, k))
            tr2, tr1 = _pm(CC(ido - 1, 0, k), CC(ido - 1, 2, k))
            ch[H(ido - 1, k, 0)] = tr2 + tr2
            ch[H(ido - 1, k, 1)] = sqrt2 * (tr1 - ti1)
            ch[H(ido - 1, k, 2)] = ti2 + ti2
            ch[H(ido - 1, k, 3)] = -sqrt2 * (tr1 + ti1)
    if ido <= 2:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, tr1 = _pm(CC(i - 1, 0, k), CC(ic - 1, 3, k))
            ti1, ti2 = _pm(CC(i, 0, k), CC(ic, 3, k))
            tr4, ti3 = _pm(CC(i, 2, k), CC(ic, 1, k))
            tr3, ti4 = _pm(CC(i - 1, 2, k), CC(ic - 1, 1, k))
            ch[H(i - 1, k, 0)], cr3 = _pm(tr2, tr3)
            ch[H(i, k, 0)], ci3 = _pm(ti2, ti3)
            cr4, cr2 = _pm(tr1, tr4)
            ci2, ci4 = _pm(ti1, ti4)
            ch[H(i, k, 1)], ch[H(i - 1, k, 1)] = _mulpm(WA(0, i - 2), WA(0, i - 1), ci2, cr2)
            ch[H(i, k, 2)], ch[H(i - 1, k, 2)] = _mulpm(WA(1, i - 2), WA(1, i - 1), ci3, cr3)
            ch[H(i, k, 3)], ch[H(i - 1, k, 3)] = _mulpm(WA(2, i - 2), WA(2, i - 1), ci4, cr4)
    return ch


def _radix5_constants(p):
    return (p.const("0.3090169943749474241022934171828191"),
            p.const("0.9510565162951535721164393333793821"),
            p.const("-0.8090169943749474241022934171828191"),
            p.const("0.5877852522924731291687059546390728"))


def _radf5(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    tr11, ti11, tr12, ti12 = _radix5_constants(p)
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + l1 * c)]
    H = lambda a, b, c: a + ido * (b + 5 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        cr2, ci5 = _pm(CC(0, k, 4), CC(0, k, 1))
        cr3, ci4 = _pm(CC(0, k, 3), CC(0, k, 2))
        ch[H(0, 0, k)] = CC(0, k, 0) + cr2 + cr3
        ch[H(ido - 1, 1, k)] = CC(0, k, 0) + tr11 * cr2 + tr12 * cr3
        ch[H(0, 2, k)] = ti11 * ci5 + ti12 * ci4
        ch[H(ido - 1, 3, k)] = CC(0, k, 0) + tr12 * cr2 + tr11 * cr3
        ch[H(0, 4, k)] = ti12 * ci5 - ti11 * ci4
    if ido == 1:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            dr2, di2 = _mulpm(WA(0, i - 2), WA(0, i - 1), CC(i - 1, k, 1), CC(i, k, 1))
            dr3, di3 = _mulpm(WA(1, i - 2), WA(1, i - 1), CC(i - 1, k, 2), CC(i, k, 2))
            dr4, di4 = _mulpm(WA(2, i - 2), WA(2, i - 1), CC(i - 1, k, 3), CC(i, k, 3))
            dr5, di5 = _mulpm(WA(3, i - 2), WA(3, i - 1), CC(i - 1, k, 4), CC(i, k, 4))
            dr2, di2, dr5, di5 = _rearrange(dr2, di2, dr5, di5)
            dr3, di3, dr4, di4 = _rearrange(dr3, di3, dr4, di4)
            ch[H(i - 1, 0, k)] = CC(i - 1, k, 0) + dr2 + dr3
            ch[H(i, 0, k)] = CC(i, k, 0) + di2 + di3
            tr2 = CC(i - 1, k, 0) + tr11 * dr2 + tr12 * dr3
            ti2 = CC(i, k, 0) + tr11 * di2 + tr12 * di3
            tr3 = CC(i - 1, k, 0) + tr12 * dr2 + tr11 * dr3
            ti3 = CC(i, k, 0) + tr12 * di2 + tr11 * di3
            tr5 = ti11 * dr5 + ti12 * dr4
            ti5 = ti11 * di5 + ti12 * di4
            tr4 = ti12 * dr5 - ti11 * dr4
            ti4 = ti12 * di5 - ti11 * di4
            ch[H(i - 1, 2, k)], ch[H(ic - 1, 1, k)] = _pm(tr2, tr5)
            ch[H(i, 2, k)], ch[H(ic, 1, k)] = _pm(ti5, ti2)
            ch[H(i - 1, 4, k)], ch[H(ic - 1, 3, k)] = _pm(tr3, tr4)
            ch[H(i, 4, k)], ch[H(ic, 3, k)] = _pm(ti4, ti3)
    return ch


def _radb5(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    tr11, ti11, tr12, ti12 = _radix5_constants(p)
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + 5 * c)]
    H = lambda a, b, c: a + ido * (b + l1 * c)
    WA = lambda x, i: wa[i + x * (ido - 1)]
    for k in range(l1):
        ti5 = CC(0, 2, k) + CC(0, 2, k)
        ti4 = CC(0, 4, k) + CC(0, 4, k)
        tr2 = CC(ido - 1, 1, k) + CC(ido - 1, 1, k)
        tr3 = CC(ido - 1, 3, k) + CC(ido - 1, 3, k)
        ch[H(0, k, 0)] = CC(0, 0, k) + tr2 + tr3
        cr2 = CC(0, 0, k) + tr11 * tr2 + tr12 * tr3
        cr3 = CC(0, 0, k) + tr12 * tr2 + tr11 * tr3
        ci5, ci4 = _mulpm(ti5, ti4, ti11, ti12)
        ch[H(0, k, 4)], ch[H(0, k, 1)] = _pm(cr2, ci5)
        ch[H(0, k, 3)], ch[H(0, k, 2)] = _pm(cr3, ci4)
    if ido == 1:
        return ch
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, tr5 = _pm(CC(i - 1, 2, k), CC(ic - 1, 1, k))
            ti5, ti2 = _pm(CC(i, 2, k), CC(ic, 1, k))
            tr3, tr4 = _pm(CC(i - 1, 4, k), CC(ic - 1, 3, k))
            ti4, ti3 = _pm(CC(i, 4, k), CC(ic, 3, k))
            ch[H(i - 1, k, 0)] = CC(i - 1, 0, k) + tr2 + tr3
            ch[H(i, k, 0)] = CC(i, 0, k) + ti2 + ti3
            cr2 = CC(i - 1, 0, k) + tr11 * tr2 + tr12 * tr3
            ci2 = CC(i, 0, k) + tr11 * ti2 + tr12 * ti3
            cr3 = CC(i - 1, 0, k) + tr12 * tr2 + tr11 * tr3
            ci3 = CC(i, 0, k) + tr12 * ti2 + tr11 * ti3
            cr5, cr4 = _mulpm(tr5, tr4, ti11, ti12)
            ci5, ci4 = _mulpm(ti5, ti4, ti11, ti12)
            dr4, dr3 = _pm(cr3, ci4)
            di3, di4 = _pm(ci3, cr4)
            dr5, dr2 = _pm(cr2, ci5)
            di2, di5 = _pm(ci2, cr5)
            ch[H(i, k, 1)], ch[H(i - 1, k, 1)] = _mulpm(WA(0, i - 2), WA(0, i - 1), di2, dr2)
            ch[H(i, k, 2)], ch[H(i - 1, k, 2)] = _mulpm(WA(1, i - 2), WA(1, i - 1), di3, dr3)
            ch[H(i, k, 3)], ch[H(i - 1, k, 3)] = _mulpm(WA(2, i - 2), WA(2, i - 1), di4, dr4)
            ch[H(i, k, 4)], ch[H(i - 1, k, 4)] = _mulpm(WA(3, i - 2), WA(3, i - 1), di5, dr5)
    return ch


def _cos_sin_table(p, l1, ido, ip):
    """csarr[2m], csarr[2m+1] = re, im of exp(2 pi i m / ip), mirrored for m > ip/2
    from the conjugate, as ducc0 fills it."""
    t = p.t
    cs = [None] * (2 * ip)
    cs[0], cs[1] = t(1), t(0)
    i, ic = 2, 2 * ip - 2
    while i <= ic:
        re, im = p.roots[(i // 2) * l1 * ido]
        cs[i], cs[i + 1] = re, im
        cs[ic], cs[ic + 1] = re, -im
        i += 2
        ic -= 2
    return cs


def _accumulate(cs, dst, src, l, ip, ipph, idl1, wrap):
    """dst[l] and dst[ip-l] += the rest of the sum over j of cos / sin(2 pi j l / ip)
    times src[j] / src[ip-j], in ducc0's groups of four, two and one terms."""
    lc = ip - l
    iang = 2 * l
    j, jc = 3, ip - 3

    def angles(count):
        nonlocal iang
        out = []
        for _ in range(count):
            iang += l
            if wrap(iang):
                iang -= ip
            out.append((cs[2 * iang], cs[2 * iang + 1]))
        return out

    for group in (4, 2, 1):
        while j < ipph - (group - 1):
            ang = angles(group)
            for ik in range(idl1):
                sr = ang[0][0] * src(ik, j)
                si = ang[0][1] * src(ik, jc)
                for m in range(1, group):
                    sr = sr + ang[m][0] * src(ik, j + m)
                    si = si + ang[m][1] * src(ik, jc - m)
                dst[ik + idl1 * l] = dst[ik + idl1 * l] + sr
                dst[ik + idl1 * lc] = dst[ik + idl1 * lc] + si
            j += group
            jc -= group


def _radfg(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    cs = _cos_sin_table(p, l1, ido, ip)
    ipph = (ip + 1) // 2
    idl1 = ido * l1
    cc = list(cc)  # the pass works in place on its input
    ch = [None] * p.n
    CCi = lambda a, b, c: a + ido * (b + ip * c)
    CH = lambda a, b, c: ch[a + ido * (b + l1 * c)]
    C1i = lambda a, b, c: a + ido * (b + l1 * c)
    C2 = lambda a, b: cc[a + idl1 * b]

    if ido > 1:
        for j in range(1, ipph):
            jc = ip - j
            is1, is2 = (j - 1) * (ido - 1), (jc - 1) * (ido - 1)
            for k in range(l1):
                idij, idij2 = is1, is2
                for i in range(1, ido - 1, 2):
                    t1, t2 = cc[C1i(i, k, j)], cc[C1i(i + 1, k, j)]
                    t3, t4 = cc[C1i(i, k, jc)], cc[C1i(i + 1, k, jc)]
                    x1 = wa[idij] * t1 + wa[idij + 1] * t2
                    x2 = wa[idij] * t2 - wa[idij + 1] * t1
                    x3 = wa[idij2] * t3 + wa[idij2 + 1] * t4
                    x4 = wa[idij2] * t4 - wa[idij2 + 1] * t3
                    cc[C1i(i, k, j)], cc[C1i(i + 1, k, jc)] = _pm(x3, x1)
                    cc[C1i(i + 1, k, j)], cc[C1i(i, k, jc)] = _pm(x2, x4)
                    idij += 2
                    idij2 += 2

    for j in range(1, ipph):
        jc = ip - j
        for k in range(l1):
            a, b = cc[C1i(0, k, jc)], cc[C1i(0, k, j)]
            cc[C1i(0, k, jc)], cc[C1i(0, k, j)] = a - b, a + b

    for l in range(1, ipph):
        lc = ip - l
        for ik in range(idl1):
            ch[ik + idl1 * l] = C2(ik, 0) + cs[2 * l] * C2(ik, 1) + cs[4 * l] * C2(ik, 2)
            ch[ik + idl1 * lc] = cs[2 * l + 1] * C2(ik, ip - 1) + cs[4 * l + 1] * C2(ik, ip - 2)
        _accumulate(cs, ch, C2, l, ip, ipph, idl1, lambda a: a >= ip)
    for ik in range(idl1):
        ch[ik] = C2(ik, 0)
    for j in range(1, ipph):
        for ik in range(idl1):
            ch[ik] = ch[ik] + C2(ik, j)

    for k in range(l1):
        for i in range(ido):
            cc[CCi(i, 0, k)] = CH(i, k, 0)
    for j in range(1, ipph):
        jc, j2 = ip - j, 2 * j - 1
        for k in range(l1):
            cc[CCi(ido - 1, j2, k)] = CH(0, k, j)
            cc[CCi(0, j2 + 1, k)] = CH(0, k, jc)
    if ido == 1:
        return cc
    for j in range(1, ipph):
        jc, j2 = ip - j, 2 * j - 1
        for k in range(l1):
            for i in range(1, ido - 1, 2):
                ic = ido - i - 2
                cc[CCi(i, j2 + 1, k)] = CH(i, k, j) + CH(i, k, jc)
                cc[CCi(ic, j2, k)] = CH(i, k, j) - CH(i, k, jc)
                cc[CCi(i + 1, j2 + 1, k)] = CH(i + 1, k, j) + CH(i + 1, k, jc)
                cc[CCi(ic + 1, j2, k)] = CH(i + 1, k, jc) - CH(i + 1, k, j)
    return cc


def _radbg(p, cc, l1, ido, ip):
    wa = p.twiddles(l1, ido, ip)
    t = p.t
    cs = _cos_sin_table(p, l1, ido, ip)
    ipph = (ip + 1) // 2
    idl1 = ido * l1
    cc = list(cc)  # the pass works in place on its input
    ch = [None] * p.n
    CC = lambda a, b, c: cc[a + ido * (b + ip * c)]
    Hi = lambda a, b, c: a + ido * (b + l1 * c)
    C1 = lambda a, b, c: cc[a + ido * (b + l1 * c)]
    CH2 = lambda a, b: ch[a + idl1 * b]

    for k in range(l1):
        for i in range(ido):
            ch[Hi(i, k, 0)] = CC(i, 0, k)
    for j in range(1, ipph):
        jc, j2 = ip - j, 2 * j - 1
        for k in range(l1):
            ch[Hi(0, k, j)] = t(2) * CC(ido - 1, j2, k)
            ch[Hi(0, k, jc)] = t(2) * CC(0, j2 + 1, k)
    if ido != 1:
        for j in range(1, ipph):
            jc, j2 = ip - j, 2 * j - 1
            for k in range(l1):
                for i in range(1, ido - 1, 2):
                    ic = ido - i - 2
                    ch[Hi(i, k, j)] = CC(i, j2 + 1, k) + CC(ic, j2, k)
                    ch[Hi(i, k, jc)] = CC(i, j2 + 1, k) - CC(ic, j2, k)
                    ch[Hi(i + 1, k, j)] = CC(i + 1, j2 + 1, k) - CC(ic + 1, j2, k)
                    ch[Hi(i + 1, k, jc)] = CC(i + 1, j2 + 1, k) + CC(ic + 1, j2, k)

    for l in range(1, ipph):
        lc = ip - l
        for ik in range(idl1):
            cc[ik + idl1 * l] = CH2(ik, 0) + cs[2 * l] * CH2(ik, 1) + cs[4 * l] * CH2(ik, 2)
            cc[ik + idl1 * lc] = cs[2 * l + 1] * CH2(ik, ip - 1) + cs[4 * l + 1] * CH2(ik, ip - 2)
        _accumulate(cs, cc, CH2, l, ip, ipph, idl1, lambda a: a > ip)
    for j in range(1, ipph):
        for ik in range(idl1):
            ch[ik] = ch[ik] + CH2(ik, j)
    for j in range(1, ipph):
        jc = ip - j
        for k in range(l1):
            ch[Hi(0, k, jc)], ch[Hi(0, k, j)] = _pm(C1(0, k, j), C1(0, k, jc))
    if ido == 1:
        return ch

    for j in range(1, ipph):
        jc = ip - j
        for k in range(l1):
            for i in range(1, ido - 1, 2):
                ch[Hi(i, k, j)] = C1(i, k, j) - C1(i + 1, k, jc)
                ch[Hi(i, k, jc)] = C1(i, k, j) + C1(i + 1, k, jc)
                ch[Hi(i + 1, k, j)] = C1(i + 1, k, j) + C1(i, k, jc)
                ch[Hi(i + 1, k, jc)] = C1(i + 1, k, j) - C1(i, k, jc)
    for j in range(1, ip):
        for k in range(l1):
            idij = (j - 1) * (ido - 1)
            for i in range(1, ido - 1, 2):
                t1, t2 = ch[Hi(i, k, j)], ch[Hi(i + 1, k, j)]
                ch[Hi(i, k, j)] = wa[idij] * t1 - wa[idij + 1] * t2
                ch[Hi(i + 1, k, j)] = wa[idij] * t2 + wa[idij + 1] * t1
                idij += 2
    return ch
