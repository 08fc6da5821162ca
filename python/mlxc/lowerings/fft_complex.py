"""The complex FFT of XLA's CPU FFT library (ducc0), operation for operation, so that
our results match XLA's bit for bit.

A transform works on a list of "lanes", one (re, im) pair per element of the
transformed axis. A lane part is anything with IEEE `+ - *` and unary `-` that round
once per operation: numpy arrays of the element type (to check against JAX quickly)
or the emitter values of fft_scalar (to build the program). Constants are numpy
scalars of the element type, rounded from the same long-double literals as ducc0's.

ducc0 splits n into factors (8s, then 4s, a lone 2 moved to the front, then odd
primes) and runs one pass per factor, each a radix-p butterfly over l1 * ido
sub-transforms followed by twiddle products; passes 2, 3, 4, 5, 7, 8 and 11 are
hand-written and other primes below 110 share the generic odd pass. Each expression
below keeps ducc0's operand pairing and left-to-right evaluation, since a different
order rounds differently. The forward transform multiplies by conjugated roots, and
the scale factor `fct` multiplies the result once, after the last pass.

Prime factors of 110 and above (ducc0's Bluestein pass) are not reproduced:
`supported(n)` says which lengths this module covers.
"""

from __future__ import annotations

import numpy as np

from .fft_roots import unity_roots

# ducc0 switches to its Bluestein pass for prime factors from here on.
_GENERIC_MAX = 110


def factorize(n: int, leading: tuple[int, ...] = (8, 4)) -> list[int]:
    """ducc0's factor order: the `leading` power-of-two radices as often as they divide
    (8s then 4s for complex transforms, 4s for real ones), a 2 swapped to the front,
    odd factors ascending."""
    factors = []
    for radix in leading:
        while n % radix == 0:
            factors.append(radix)
            n //= radix
    if n % 2 == 0:
        n //= 2
        factors.append(2)
        factors[0], factors[-1] = factors[-1], factors[0]
    divisor = 3
    while divisor * divisor <= n:
        while n % divisor == 0:
            factors.append(divisor)
            n //= divisor
        divisor += 2
    if n > 1:
        factors.append(n)
    return factors


def supported(n: int) -> bool:
    return n >= 1 and all(f < _GENERIC_MAX for f in factorize(n))


def _const(dtype, literal: str):
    """A C++ `Tfs(<literal>L)`: the decimal rounded to long double, then to Tfs."""
    return np.dtype(dtype).type(np.longdouble(literal))


# The cos/sin constants of the hand-written passes, as ducc0 spells them.
_COS_SIN = {
    3: [("-0.5", "0.8660254037844386467637231707529362")],
    5: [("0.3090169943749474241022934171828191", "0.9510565162951535721164393333793821"),
        ("-0.8090169943749474241022934171828191", "0.5877852522924731291687059546390728")],
    7: [("0.6234898018587335305250048840042398", "0.7818314824680298087084445266740578"),
        ("-0.2225209339563144042889025644967948", "0.9749279121818236070181316829939312"),
        ("-0.9009688679024191262361023195074451", "0.433883739117558120475768332848359")],
    11: [("0.8412535328311811688618116489193677", "0.5406408174555975821076359543186917"),
         ("0.4154150130018864255292741492296232", "0.9096319953545183714117153830790285"),
         ("-0.1423148382732851404437926686163697", "0.9898214418809327323760920377767188"),
         ("-0.6548607339452850640569250724662936", "0.7557495743542582837740358439723444"),
         ("-0.9594929736144973898903680570663277", "0.2817325568414296977114179153466169")],
}
_HALF_SQRT2 = "0.707106781186547524400844362104849"


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1])


def _scale(a, s):
    return (a[0] * s, a[1] * s)


def _twiddle(v, w, fwd: bool):
    """ducc0's special_mul: v * conj(w) forward, v * w backward."""
    if fwd:
        return (v[0] * w[0] + v[1] * w[1], v[1] * w[0] - v[0] * w[1])
    return (v[0] * w[0] - v[1] * w[1], v[0] * w[1] + v[1] * w[0])


def _rot90(a, fwd: bool):
    """Multiplication by -i (forward) or +i: a swap and a negation, exact."""
    return (a[1], -a[0]) if fwd else (-a[1], a[0])


class _Pass:
    """One radix-`ip` pass over `l1` blocks of `ido` interleaved sub-transforms:
    reads cc[a + ido*(b + ip*c)], writes ch[a + ido*(b + l1*c)] (ducc0's CC/CH)."""

    def __init__(self, ip: int, l1: int, ido: int, roots, dtype, fwd: bool):
        self.ip, self.l1, self.ido, self.fwd = ip, l1, ido, fwd
        self.roots, self.dtype = roots, np.dtype(dtype)

    def wa(self, x: int, i: int):
        """Twiddle of output x + 1 at position i: root (x + 1) * l1 * i."""
        return self.roots[(x + 1) * self.l1 * i]

    def run(self, cc: list) -> list:
        ip, l1, ido = self.ip, self.l1, self.ido
        ch = [None] * (ip * l1 * ido)
        for k in range(l1):
            for i in range(ido):
                outs = self.butterfly([cc[i + ido * (m + ip * k)] for m in range(ip)], i)
                for m, value in enumerate(outs):
                    ch[i + ido * (k + l1 * m)] = value
        return ch

    def finish(self, outs: list, i: int) -> list:
        """Outputs 1.. of a butterfly at position i > 0 take their twiddles."""
        if i == 0:
            return outs
        return [outs[0]] + [_twiddle(v, self.wa(m - 1, i), self.fwd)
                            for m, v in enumerate(outs) if m > 0]


class _Pass2(_Pass):
    def butterfly(self, c, i):
        return self.finish([_add(c[0], c[1]), _sub(c[0], c[1])], i)


class _Pass4(_Pass):
    def butterfly(self, c, i):
        t2, t1 = _add(c[0], c[2]), _sub(c[0], c[2])
        t3, t4 = _add(c[1], c[3]), _sub(c[1], c[3])
        t4 = _rot90(t4, self.fwd)
        return self.finish([_add(t2, t3), _add(t1, t4), _sub(t2, t3), _sub(t1, t4)], i)


class _PassOdd(_Pass):
    """Passes 3, 5, 7 and 11: the sums and differences of mirrored inputs, then for
    each output pair a real-weighted sum of the sums (ca) and an imaginary-weighted
    sum of the differences (cb), with ducc0's constants and term order."""

    def __init__(self, ip, l1, ido, roots, dtype, fwd):
        super().__init__(ip, l1, ido, roots, dtype, fwd)
        sign = -1 if fwd else 1
        self.cos = [_const(dtype, c) for c, _ in _COS_SIN[ip]]
        self.sin = [self.dtype.type(sign) * _const(dtype, s) for _, s in _COS_SIN[ip]]

    def butterfly(self, c, i):
        ip, h = self.ip, (self.ip - 1) // 2
        t0 = c[0]
        sums = [_add(c[j], c[ip - j]) for j in range(1, h + 1)]
        diffs = [_sub(c[j], c[ip - j]) for j in range(1, h + 1)]
        if ip == 3:
            first = _add(t0, sums[0])
        else:
            first = t0
            for s in sums:
                first = _add(first, s)
        outs = [None] * ip
        outs[0] = first
        for u in range(1, h + 1):
            # Output u weighs sum j by cos(2 pi u j / ip), difference j by sin(...).
            idx = [(u * j) % ip for j in range(1, h + 1)]
            x = [self.cos[min(m, ip - m) - 1] for m in idx]
            y = [self.sin[m - 1] if m <= h else -self.sin[ip - m - 1] for m in idx]
            ca_r, ca_i = t0[0], t0[1]
            for xj, s in zip(x, sums):
                ca_r, ca_i = ca_r + xj * s[0], ca_i + xj * s[1]
            if ip == 3:
                cb = (-(diffs[0][1] * y[0]), diffs[0][0] * y[0])
            else:
                cb_i = y[0] * diffs[0][0]
                cb_r = y[0] * diffs[0][1]
                for yj, d in zip(y[1:], diffs[1:]):
                    cb_i = cb_i + yj * d[0]
                    cb_r = cb_r + yj * d[1]
                cb = (-cb_r, cb_i)
            ca = (ca_r, ca_i)
            outs[u], outs[ip - u] = _add(ca, cb), _sub(ca, cb)
        return self.finish(outs, i)


class _Pass8(_Pass):
    def __init__(self, ip, l1, ido, roots, dtype, fwd):
        super().__init__(ip, l1, ido, roots, dtype, fwd)
        self.hsqt2 = _const(dtype, _HALF_SQRT2)

    def rot45(self, a):
        h = self.hsqt2
        if self.fwd:
            return (h * (a[0] + a[1]), h * (a[1] - a[0]))
        return (h * (a[0] - a[1]), h * (a[1] + a[0]))

    def rot135(self, a):
        h = self.hsqt2
        if self.fwd:
            return (h * (a[1] - a[0]), h * (-a[0] - a[1]))
        return (h * (-a[0] - a[1]), h * (a[0] - a[1]))

    def butterfly(self, c, i):
        fwd = self.fwd
        a1, a5 = _add(c[1], c[5]), _sub(c[1], c[5])
        a3, a7 = _add(c[3], c[7]), _sub(c[3], c[7])
        a1, a3 = _add(a1, a3), _sub(a1, a3)
        a3 = _rot90(a3, fwd)
        a7 = _rot90(a7, fwd)
        a5, a7 = _add(a5, a7), _sub(a5, a7)
        a5 = self.rot45(a5)
        a7 = self.rot135(a7)
        a0, a4 = _add(c[0], c[4]), _sub(c[0], c[4])
        a2, a6 = _add(c[2], c[6]), _sub(c[2], c[6])
        a0, a2 = _add(a0, a2), _sub(a0, a2)
        a6 = _rot90(a6, fwd)
        a4, a6 = _add(a4, a6), _sub(a4, a6)
        outs = [_add(a0, a1), _add(a4, a5), _add(a2, a3), _add(a6, a7),
                _sub(a0, a1), _sub(a4, a5), _sub(a2, a3), _sub(a6, a7)]
        return self.finish(outs, i)


class _PassGeneric(_Pass):
    """ducc0's pass for other odd primes: sums and differences of mirrored inputs,
    then per output pair an accumulation two terms at a time with the roots
    csarr[j] = root j * l1 * ido (conjugated forward), then the twiddles."""

    def __init__(self, ip, l1, ido, roots, dtype, fwd):
        super().__init__(ip, l1, ido, roots, dtype, fwd)
        cs = [roots[l1 * ido * j] for j in range(ip)]
        self.cs = [(r, -im) if fwd else (r, im) for r, im in cs]

    def butterfly(self, c, i):
        ip, ipph, cs = self.ip, (self.ip + 1) // 2, self.cs
        ch = [None] * ip
        ch[0] = c[0]
        for j in range(1, ipph):
            ch[j], ch[ip - j] = _add(c[j], c[ip - j]), _sub(c[j], c[ip - j])
        x = [None] * ip
        tmp = ch[0]
        for j in range(1, ipph):
            tmp = _add(tmp, ch[j])
        x[0] = tmp
        for l in range(1, ipph):
            lc = ip - l
            wal, wal2 = cs[l], cs[2 * l]
            lr = ch[0][0] + wal[0] * ch[1][0] + wal2[0] * ch[2][0]
            li = ch[0][1] + wal[0] * ch[1][1] + wal2[0] * ch[2][1]
            lcr = (-wal[1]) * ch[ip - 1][1] - wal2[1] * ch[ip - 2][1]
            lci = wal[1] * ch[ip - 1][0] + wal2[1] * ch[ip - 2][0]
            iwal = 2 * l
            j, jc = 3, ip - 3
            while j < ipph - 1:
                iwal += l
                if iwal > ip:
                    iwal -= ip
                w1 = cs[iwal]
                iwal += l
                if iwal > ip:
                    iwal -= ip
                w2 = cs[iwal]
                lr = lr + (ch[j][0] * w1[0] + ch[j + 1][0] * w2[0])
                li = li + (ch[j][1] * w1[0] + ch[j + 1][1] * w2[0])
                lcr = lcr - (ch[jc][1] * w1[1] + ch[jc - 1][1] * w2[1])
                lci = lci + (ch[jc][0] * w1[1] + ch[jc - 1][0] * w2[1])
                j, jc = j + 2, jc - 2
            while j < ipph:
                iwal += l
                if iwal > ip:
                    iwal -= ip
                w1 = cs[iwal]
                lr = lr + ch[j][0] * w1[0]
                li = li + ch[j][1] * w1[0]
                lcr = lcr - ch[jc][1] * w1[1]
                lci = lci + ch[jc][0] * w1[1]
                j, jc = j + 1, jc - 1
            x[l], x[lc] = (lr, li), (lcr, lci)
        for j in range(1, ipph):
            jc = ip - j
            x[j], x[jc] = _add(x[j], x[jc]), _sub(x[j], x[jc])
        return self.finish(x, i)


_PASSES = {2: _Pass2, 3: _PassOdd, 4: _Pass4, 5: _PassOdd, 7: _PassOdd, 8: _Pass8,
           11: _PassOdd}


def c2c(lanes: list, n: int, dtype, forward: bool, fct=None, between=None) -> list:
    """The length-n complex transform of `lanes` (n (re, im) pairs), unnormalized,
    then multiplied by `fct` (a scalar of `dtype`) unless it is None or 1. `between`,
    if given, maps the lanes between two passes (it must not change their values)."""
    if len(lanes) != n:
        raise ValueError(f"c2c of length {n} got {len(lanes)} lanes")
    if not supported(n):
        raise ValueError(f"c2c: length {n} has a prime factor of {_GENERIC_MAX} or more")
    roots = unity_roots(n, np.dtype(dtype).name)
    data = list(lanes)
    l1 = 1
    for index, ip in enumerate(factorize(n) if n > 1 else []):
        if index and between is not None:
            data = between(data)
        ido = n // (l1 * ip)
        kind = _PASSES.get(ip, _PassGeneric)
        data = kind(ip, l1, ido, roots, dtype, forward).run(data)
        l1 *= ip
    if fct is not None and fct != 1:
        fct = np.dtype(dtype).type(fct)
        data = [_scale(v, fct) for v in data]
    return data
