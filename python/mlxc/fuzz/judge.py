"""Is mlxc's answer the reference's, up to what correct implementations may differ by?

- integers and booleans: exact;
- floats (complex: each part): NaN where the reference has NaN, the same infinity
  where it has one, and elsewhere within the program's ulp budget (the sum over its
  float steps of each op's class, `ops.ULPS`: 0 for exact ops, a few for rounded
  arithmetic, more for transcendental ops and sums) or within that many epsilons of
  the program's scale (the largest magnitude among its intermediate values: an error
  made on a large intermediate survives a cancellation).
"""

from __future__ import annotations

from typing import Optional

import ml_dtypes
import numpy as np

from ..conformance.checks import _describe as describe, type_mismatch, ulp_difference
from .ops import ULPS, load_all
from .program import Program


def budget(p: Program) -> int:
    table = load_all()
    total = 0
    for s in p.steps:
        o = table[s.op]
        tol = o.tol
        if o.extra.get("tol_from_params"):
            tol = o.extra["tol_from_params"](s.params)
        total += ULPS[tol]
    return min(total, 1 << 16)


def scale_of(arrays) -> float:
    """The largest finite magnitude among the float arrays (at least 1)."""
    best = 1.0
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "fcV" and a.size and a.dtype != np.bool_:
            try:
                w = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
            except (TypeError, ValueError):
                continue
            w = w[np.isfinite(w)]
            if w.size:
                best = max(best, float(w.max()))
    return best


def _eps(dt: np.dtype) -> float:
    return float(ml_dtypes.finfo(dt).eps)


def _parts(a):
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def coarsest_eps(p: Program) -> Optional[float]:
    """The largest epsilon among the float types the program computes in (inputs and
    steps): a complex64 pow converted to complex128 carries complex64's error, which
    the result's own epsilon would judge 2^29 times too strictly."""
    best = None
    for v in list(p.inputs) + [s.out for s in p.steps]:
        dt = np.dtype(getattr(ml_dtypes, v.dtype)) if hasattr(ml_dtypes, v.dtype) \
            else np.dtype(v.dtype)
        if dt.kind == "c":
            dt = np.dtype(np.float32 if dt.itemsize == 8 else np.float64)
        if dt.kind in "fV":
            try:
                e = _eps(dt)
            except (TypeError, ValueError):
                continue
            best = e if best is None else max(best, e)
    return best


def compare(actual, expected, ulps: int, scale: float,
            eps: Optional[float] = None) -> Optional[str]:
    """None when `actual` is `expected` within the budget; else what differs. `eps`,
    if given, is the epsilon errors are scaled by (else the expected type's)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    mismatch = type_mismatch(actual, expected)
    if mismatch or actual.size == 0:
        return mismatch
    floaty = expected.dtype.kind in "fc" or (expected.dtype.kind == "V")
    if not floaty:
        bad = actual != expected
    else:
        bad = np.zeros(actual.shape, bool)
        for pa, pe in zip(_parts(actual), _parts(expected)):
            pa, pe = np.asarray(pa), np.asarray(pe)
            wa, we = pa.astype(np.float64), pe.astype(np.float64)
            nan_a, nan_e = np.isnan(wa), np.isnan(we)
            inf = np.isinf(wa) | np.isinf(we)
            with np.errstate(invalid="ignore", over="ignore"):
                far = (ulp_difference(pa, pe) > np.uint64(ulps)) & \
                      (np.abs(wa - we) > ulps * max(_eps(pe.dtype), eps or 0.0) * scale)
            bad |= np.where(nan_a | nan_e, nan_a != nan_e, np.where(inf, wa != we, far))
        if expected.dtype.kind == "c":
            # A complex value with an infinite or NaN part has no agreed answer: C99's
            # Annex G recovers infinities (inf * (1+1j) is inf+infj, numpy's sqrt of
            # nan-infj is inf-infj), the textbook formulas give NaN (XLA's products and
            # sqrt; the interpreter in places). Both non-finite counts as the same.
            bad &= ~(~np.isfinite(actual) & ~np.isfinite(expected))
    return describe(bad, actual, expected) if bad.any() else None
