"""How the conformance suites' checks compare an actual array with an expected one.

The semantics follow StableHLO's `check` dialect and the reference interpreter:

- `eq`: exact; floats compare by bits, except that any NaN matches any NaN.
- `almost_eq`: floats and complex parts within an absolute tolerance (default 1e-4);
  NaN matches NaN, infinities must agree; integers and booleans exact.
- `close`: floats (complex: each part) within `max_ulp` units in the last place
  (default 3; NaN matches NaN), counted as StableHLO does: subnormals round to zero or the smallest
  normal, and values of opposite sign add their distances from zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import ml_dtypes
import numpy as np

DEFAULT_TOLERANCE = 1e-4
DEFAULT_MAX_ULP = 3

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Check:
    kind: str  # "eq", "almost_eq", "close"
    tolerance: float = DEFAULT_TOLERANCE
    max_ulp: int = DEFAULT_MAX_ULP
    min_ulp: int = 0
    where: str = ""  # the check's position in its file, for reports


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or (dtype.kind == "V" and dtype.itemsize <= 2 and _finfo(dtype) is not None)


def _finfo(dtype: np.dtype):
    try:
        return ml_dtypes.finfo(dtype)
    except Exception:
        return None


def _parts(a: np.ndarray) -> list[np.ndarray]:
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def _bits(a: np.ndarray) -> np.ndarray:
    shape = np.shape(a)  # ascontiguousarray would make a 0-d array 1-d
    a = np.asarray(a, order="C")
    return a.reshape(-1).view(_UINT[a.dtype.itemsize]).astype(np.uint64).reshape(shape)


def ulp_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ULP distance between two float arrays of the same dtype."""
    dtype = a.dtype
    width = dtype.itemsize * 8
    sign = np.uint64(1) << np.uint64(width - 1)
    smallest_normal = np.array(_finfo(dtype).smallest_normal, dtype=dtype)
    z = _bits(smallest_normal.reshape(1))[0] - np.uint64(1)
    ba, bb = _bits(a), _bits(b)
    ma, mb = ba & ~sign, bb & ~sign  # magnitudes
    finite = np.isfinite(a.astype(np.float64)) & np.isfinite(b.astype(np.float64))

    def normalise(m):
        return np.where(m > z, m - z, np.where(2 * m < z, np.uint64(0), np.uint64(1)))

    na, nb = normalise(ma), normalise(mb)
    opposite = (ba & sign) != (bb & sign)
    same_sign = np.where(na > nb, na - nb, nb - na)
    with np.errstate(over="ignore"):
        total = na + nb
    total = np.where(total < na, np.uint64(np.iinfo(np.uint64).max), total)  # saturate
    finite_diff = np.where(opposite, total, same_sign)
    raw = np.where(ma > mb, ma - mb, mb - ma)
    return np.where(finite, finite_diff, raw)


def type_mismatch(actual: np.ndarray, expected: np.ndarray) -> Optional[str]:
    """How `actual`'s shape or dtype differs from `expected`'s, or None."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    return None


def compare(check: Check, actual: np.ndarray, expected: np.ndarray) -> Optional[str]:
    """None when `actual` passes `check` against `expected`, else a short description."""
    mismatch = type_mismatch(actual, expected)
    if mismatch or actual.size == 0:
        return mismatch
    dtype = actual.dtype
    floaty = dtype.kind == "c" or _is_float(dtype)
    if not floaty:
        bad = actual != expected
        return _describe(bad, actual, expected) if bad.any() else None
    bad = np.zeros(actual.shape, dtype=bool)
    for pa, pe in zip(_parts(actual), _parts(expected)):
        pa = np.asarray(pa)
        pe = np.asarray(pe)
        nan_a, nan_e = np.isnan(pa.astype(np.float64)), np.isnan(pe.astype(np.float64))
        if check.kind == "eq":
            bad |= np.where(nan_a | nan_e, nan_a != nan_e, _bits(pa) != _bits(pe))
        elif check.kind == "almost_eq":
            wa, we = pa.astype(np.float64), pe.astype(np.float64)
            inf = np.isinf(wa) | np.isinf(we)
            with np.errstate(invalid="ignore"):
                far = np.abs(wa - we) > check.tolerance
            bad |= np.where(nan_a | nan_e, nan_a != nan_e, np.where(inf, wa != we, far))
        else:
            ulps = ulp_difference(pa, pe)
            far = (ulps > np.uint64(check.max_ulp)) | (ulps < np.uint64(check.min_ulp))
            # NaN payloads and signs carry no meaning: any NaN matches any NaN.
            bad |= np.where(nan_a | nan_e, nan_a != nan_e, far)
    return _describe(bad, actual, expected) if bad.any() else None


def _describe(bad: np.ndarray, actual: np.ndarray, expected: np.ndarray) -> str:
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} elements differ; first at {list(index)}: "
            f"{_show(actual[index])} (actual) vs {_show(expected[index])} (expected)")


def _show(x) -> str:
    a = np.asarray(x)
    try:
        # ml_dtypes floats (kind "V") have no Python scalar of their own.
        return repr((a.astype(np.float64) if a.dtype.kind == "V" else a).item())
    except Exception:
        return repr(x)
