"""The roots of unity exp(2 pi i k / n) rounded as XLA's FFT library (ducc0) rounds
them, so that transforms built on them give XLA's results bit for bit.

Each root is the product of two double-precision roots from small tables (one indexed
by the low bits of k, one by the high bits); the table entries come from libm's cos
and sin of a reduced angle, by octant symmetry. The angle step pi / (4 n) is computed
in x87 extended precision and rounded to double, as the C++ library does. The product
is formed in double and rounded once to the element type.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

# pi to more digits than any binary format here holds; parsed by strtold.
_PI = "3.141592653589793238462643383279502884197"


def _angle_step(n: int) -> float:
    """double(0.25L * pi / n), evaluated in long double."""
    pi = np.longdouble(_PI)
    return float(np.longdouble(0.25) * pi / np.longdouble(n))


def _octant_root(x: int, n: int, ang: float) -> tuple[float, float]:
    """exp(2 pi i x / n) in double, from the cos and sin of an angle below pi / 4; the
    lower half plane is the conjugate of the upper (x -> n - x)."""
    x <<= 3
    lower = x >= 4 * n
    if lower:
        x = 8 * n - x
    if x < 2 * n:
        if x < n:
            re, im = math.cos(x * ang), math.sin(x * ang)
        else:
            re, im = math.sin((2 * n - x) * ang), math.cos((2 * n - x) * ang)
    else:
        x -= 2 * n
        if x < n:
            re, im = -math.sin(x * ang), math.cos(x * ang)
        else:
            re, im = -math.cos((2 * n - x) * ang), math.sin((2 * n - x) * ang)
    return (re, -im) if lower else (re, im)


class UnityRoots:
    """roots[k] = exp(2 pi i k / n) for 0 <= k < n, as a (real, imaginary) pair of
    `dtype` scalars (numpy float32 or float64)."""

    def __init__(self, n: int, dtype=np.float64):
        self.n = n
        self.dtype = np.dtype(dtype)
        ang = _angle_step(n)
        count = (n + 2) // 2
        shift = 1
        while (1 << shift) * (1 << shift) < count:
            shift += 1
        self._shift, self._mask = shift, (1 << shift) - 1
        self._low = [(1.0, 0.0)] + [_octant_root(i, n, ang) for i in range(1, self._mask + 1)]
        high = (count + self._mask) // (self._mask + 1)
        self._high = [(1.0, 0.0)] + [_octant_root(i * (self._mask + 1), n, ang)
                                     for i in range(1, high)]

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int):
        t = self.dtype.type
        mirrored = 2 * k > self.n
        if mirrored:
            k = self.n - k
        (ar, ai), (br, bi) = self._low[k & self._mask], self._high[k >> self._shift]
        re, im = t(ar * br - ai * bi), t(ar * bi + ai * br)
        return (re, -im) if mirrored else (re, im)


@lru_cache(maxsize=64)
def unity_roots(n: int, dtype: str) -> UnityRoots:
    """Cached tables by length and element type name ("float32", "float64")."""
    return UnityRoots(n, np.dtype(dtype))
