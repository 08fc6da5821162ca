"""Run one fuzz case in this process: build, compile with mlxc, run, judge."""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from ..conformance.execute import CRASH, TIMEOUT, Result  # noqa: F401 (re-exported)
from . import judge
from .program import Program, dtype, make_inputs

# Outcomes. SKIP: the reference itself refuses the program (JAX cannot export or run
# it, the interpreter rejects it), so it says nothing about mlxc.
# EXCLUDED: matches a known bug and was not run (see known.py).
PASS, WRONG, COMPILE_ERROR, ERROR, SKIP, EXCLUDED = (
    "pass", "wrong", "compile_error", "error", "skip", "excluded")
HANG = TIMEOUT  # the runner's name for a case past its time limit


@dataclass(frozen=True)
class FuzzCase:
    id: str  # "family/seed", or "shrink/N" for the shrinker's attempts
    family: str
    seed: int
    program: Optional[dict] = None  # None: generate(family, seed)
    exclude_known: bool = False  # programs matching a known bug (`known.py`) are not run
    out_of_scope: Optional[str] = None  # (the conformance runner's protocol)

    def to_program(self) -> Program:
        if self.program is not None:
            return Program.from_json(self.program)
        from .generate import generate
        return generate(self.family, self.seed)


def enable_x64() -> None:
    import jax
    jax.config.update("jax_enable_x64", True)


def jax_function(p: Program):
    """The program as a Python function of its inputs, returning a tuple."""
    from .ops import load_all
    table = load_all()

    def fn(*xs):
        vals = list(xs)
        for s in p.steps:
            vals.append(table[s.op].fn(s.params, *[vals[a] for a in s.args]))
        return tuple(vals[o] for o in p.outputs)

    return fn


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    lines = [l for l in text.splitlines() if l.strip()]
    # An mlxc CompileError starts with the location; the line with "error:" says what.
    for l in lines:
        if "error:" in l:
            return l.strip()[:400]
    return lines[0][:400] if lines else type(e).__name__


def reference(p: Program, inputs):
    """(module text for mlxc, expected outputs, scale) or raises _Refused."""
    if p.mode == "hlo":
        from ..conformance.oracle import OracleError, interpret
        from .hlo_text import render
        text = render(p)
        try:
            expected = interpret(text, [np.asarray(a) for a in inputs])
        except OracleError as e:
            raise _Refused(f"interpreter: {e}") from None
        except Exception as e:
            raise _Refused(f"interpreter: {_first_line(e)}") from None
        return text, expected, judge.scale_of(list(inputs) + list(expected))
    import jax
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    # One jit computes the results and every intermediate value, whose magnitudes set
    # the scale errors are judged at (one XLA compile per case, not one per op).
    everything = _all_values(p)
    try:
        exported = jax.export.export(jax.jit(jax_function(p)))(*structs)
        values = [np.asarray(r) for r in jax.jit(jax_function(everything))(*inputs)]
    except Exception as e:
        raise _Refused(f"jax: {_first_line(e)}") from None
    expected = values[:len(p.outputs)]
    return exported.mlir_module(), expected, judge.scale_of(list(inputs) + values)


class _Refused(Exception):
    pass


def _all_values(p: Program) -> Program:
    """`p` returning its results, then every step's value."""
    n = len(p.inputs)
    return Program(p.family, p.mode, p.inputs, p.steps,
                   list(p.outputs) + list(range(n, n + len(p.steps))), p.data_seed)


def run_program(p: Program, case_id: str = "") -> Result:
    import mlxc

    start = time.perf_counter()

    def done(status, detail=""):
        return Result(case_id, status, detail, time.perf_counter() - start)

    inputs = make_inputs(p)
    try:
        text, expected, scale = reference(p, inputs)
    except _Refused as e:
        return done(SKIP, str(e))
    try:
        exe = mlxc.compile(text)
    except mlxc.CompileError as e:
        return done(COMPILE_ERROR, _first_line(e))
    except Exception as e:
        return done(ERROR, f"compile raised {type(e).__name__}: {_first_line(e)}")
    copies = [np.array(a, copy=True) for a in inputs]
    try:
        actual = exe(*inputs)
    except Exception as e:
        return done(ERROR, f"call raised {type(e).__name__}: {_first_line(e)}")
    actual = list(actual) if isinstance(actual, tuple) else [actual]
    for i, (a, c) in enumerate(zip(inputs, copies)):
        if np.asarray(a).tobytes() != c.tobytes():
            return done(WRONG, f"input {i} was modified by the call")
    if len(actual) != len(expected):
        return done(WRONG, f"{len(actual)} results, expected {len(expected)}")
    ulps = p.ulps if getattr(p, "ulps", None) is not None else judge.budget(p)
    eps = judge.coarsest_eps(p)
    problem = _disagreement(actual, expected, ulps, scale, eps)
    if problem and p.mode != "hlo" and _spec_agrees(text, inputs, actual, ulps, scale, eps):
        # XLA's CPU code flushes subnormals to zero and multiplies complex infinities
        # naively; where mlxc gives what the StableHLO interpreter (the spec) gives on
        # the very module it compiled, the deviation is XLA's.
        return done(PASS, f"as the StableHLO interpreter, not XLA: {problem}")
    if problem:
        return done(WRONG, problem)
    return done(PASS)


def _disagreement(actual, expected, ulps: int, scale: float,
                  eps: Optional[float] = None) -> Optional[str]:
    for i, (a, e) in enumerate(zip(actual, expected)):
        problem = judge.compare(np.asarray(a), np.asarray(e), ulps, scale, eps)
        if problem:
            return (f"result {i} ({np.asarray(e).dtype}{list(np.shape(e))}, "
                    f"budget {ulps} ulp): {problem}")
    return None


def _spec_agrees(text: str, inputs, actual, ulps: int, scale: float,
                 eps: Optional[float] = None) -> bool:
    from ..conformance.oracle import interpret
    try:
        spec = interpret(text, [np.asarray(a) for a in inputs])
    except Exception:
        return False  # the interpreter cannot run it (LAPACK calls): XLA's verdict stands
    return len(spec) == len(actual) and _disagreement(actual, spec, ulps, scale, eps) is None


def run_case(case: FuzzCase) -> Result:
    try:
        p = case.to_program()
    except Exception as e:
        return Result(case.id, ERROR, f"generator: {type(e).__name__}: {_first_line(e)}\n"
                      + traceback.format_exc()[-600:])
    if case.exclude_known:
        from .known import known_bug
        bug = known_bug(p)
        if bug:
            return Result(case.id, EXCLUDED, bug)
    try:
        return run_program(p, case.id)
    except Exception as e:
        return Result(case.id, ERROR, f"harness: {type(e).__name__}: {_first_line(e)} "
                      + traceback.format_exc()[-600:])


def case_json(case: FuzzCase) -> dict:
    return asdict(case)
