"""Run one conformance case through the public API and judge it."""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import asdict, dataclass

import numpy as np

from .checks import Check, compare
from .harness import HarnessError, OutOfScope, prepare
from .suites import Case, case_text

# Outcomes, in the order reports list them.
PASS, FAIL, COMPILE_ERROR, ERROR, CRASH, TIMEOUT, OUT_OF_SCOPE = (
    "pass", "fail", "compile_error", "error", "crash", "timeout", "out_of_scope")

DYNAMIC_SIZES = (3, 2, 4, 5)  # tried in turn for every `?` (and dimension argument)


@dataclass
class Result:
    id: str
    status: str
    detail: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:400]


def _compare_all(checks: list[Check], outputs) -> str | None:
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for i, check in enumerate(checks):
        problem = compare(check, np.asarray(outputs[2 * i]), np.asarray(outputs[2 * i + 1]))
        if problem:
            return f"{check.kind} at {check.where}: {problem}"
    return None


def run_checks(case: Case, root: str) -> Result:
    import mlxc

    name = os.path.relpath(case.path, root)
    try:
        prepared = prepare(case_text(case), case.entry, name)
    except OutOfScope as e:
        return Result(case.id, OUT_OF_SCOPE, str(e))
    except HarnessError as e:
        return Result(case.id, ERROR, f"harness: {e}")
    try:
        exe = mlxc.compile(prepared.text, entry=prepared.entry, name=name)
    except mlxc.CompileError as e:
        return Result(case.id, COMPILE_ERROR, _first_line(e))
    problem = _compare_all(prepared.checks, exe())
    return Result(case.id, FAIL if problem else PASS, problem or "")


def run_dynamic(case: Case, root: str) -> Result:
    """Compile a program with `?` dimensions, call it at concrete sizes, and compare
    with the StableHLO interpreter on the same inputs."""
    import mlxc

    from . import oracle

    name = os.path.relpath(case.path, root)
    text = case_text(case)
    try:
        exe = mlxc.compile(text, name=name)
    except mlxc.CompileError as e:
        return Result(case.id, COMPILE_ERROR, _first_line(e))
    last = "no size worked"
    for size in DYNAMIC_SIZES:
        inputs = oracle.inputs_for(exe.signature, size, seed=size)
        try:
            expected = oracle.interpret(text, inputs)
        except oracle.OracleError as e:
            last = f"interpreter at size {size}: {e}"
            continue
        try:
            actual = exe(*inputs)
        except mlxc.CompileError as e:
            return Result(case.id, COMPILE_ERROR, f"at size {size}: {_first_line(e)}")
        actual = actual if isinstance(actual, tuple) else (actual,)
        for i, (a, e) in enumerate(zip(actual, expected)):
            problem = _compare_with_oracle(np.asarray(a), e)
            if problem:
                return Result(case.id, FAIL, f"result {i} at size {size}: {problem}")
        return Result(case.id, PASS, f"size {size}")
    return Result(case.id, ERROR, last)


# Normwise tolerances for the dynamic suite, which has no checks of its own: sums,
# dots and convolutions may add in another order than the interpreter (vectorised,
# reassociated), which moves small results by many ulps but the whole result by
# about eps times its size.
_NORMWISE = {2: 2e-2, 4: 1e-5, 8: 1e-12}  # by the itemsize of the (real) float type


def _compare_with_oracle(actual: np.ndarray, expected: np.ndarray):
    """None when `actual` matches the interpreter's `expected`, else the difference."""
    if expected.dtype.kind not in "fcV":
        return compare(Check("eq"), actual, expected)
    problem = compare(Check("close", max_ulp=3), actual, expected)
    if problem is None or actual.shape != expected.shape or actual.dtype != expected.dtype:
        return problem
    wide_a, wide_e = actual.astype(np.complex128), expected.astype(np.complex128)
    finite = np.isfinite(wide_e)
    if not np.array_equal(np.isnan(wide_a), np.isnan(wide_e)) or \
            not np.array_equal(wide_a[~finite & ~np.isnan(wide_e)], wide_e[~finite & ~np.isnan(wide_e)]):
        return problem
    scale = np.abs(wide_e[finite]).max(initial=0.0)
    itemsize = np.dtype(expected.dtype).itemsize // (2 if expected.dtype.kind == "c" else 1)
    error = np.abs(wide_a[finite] - wide_e[finite]).max(initial=0.0)
    if error <= _NORMWISE[itemsize] * max(scale, np.finfo(np.float32).tiny):
        return None
    return f"{problem} (normwise error {error / max(scale, 1e-300):.1e})"


def run_case(case: Case, root: str) -> Result:
    start = time.perf_counter()
    if case.out_of_scope:
        return Result(case.id, OUT_OF_SCOPE, case.out_of_scope)
    try:
        result = run_dynamic(case, root) if case.suite == "dynamic" else run_checks(case, root)
    except Exception as e:  # a bug in mlxc or the harness: report it, keep going
        tb = traceback.extract_tb(e.__traceback__)[-1]
        result = Result(case.id, ERROR, f"{type(e).__name__}: {_first_line(e)} "
                                        f"({os.path.basename(tb.filename)}:{tb.lineno})")
    result.seconds = time.perf_counter() - start
    return result
