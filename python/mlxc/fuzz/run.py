"""Run fuzz cases in worker processes, tally them per family, shrink the failures and
write their reproducers.

The pool is the conformance runner's (`conformance.runner.run`): each worker runs
many cases; one that dies (a signal, an abort) or overruns the time limit is
replaced and its case recorded as a crash or a hang.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, defaultdict
from typing import Callable, Optional

from ..conformance import runner
from .execute import COMPILE_ERROR, CRASH, ERROR, EXCLUDED, HANG, PASS, SKIP, WRONG, FuzzCase
from .generate import FAMILIES, mixed_families
from .program import Program

WORKER = [sys.executable, "-m", "mlxc.fuzz.worker"]
ALL_FAMILIES = list(FAMILIES)
FAILURES = (WRONG, CRASH, HANG, COMPILE_ERROR, ERROR)


def cases(count: int, seed: int = 0, family: Optional[str] = None,
          exclude_known: bool = False) -> list[FuzzCase]:
    """Cases seed .. seed+count-1: of `family`, or of each family in turn (by weight)."""
    if family and family not in ALL_FAMILIES:
        raise ValueError(f"unknown fuzz family {family!r}; families: {', '.join(ALL_FAMILIES)}")
    mixed = mixed_families()
    out = []
    for s in range(seed, seed + count):
        f = family or mixed[s % len(mixed)]
        out.append(FuzzCase(f"{f}/{s}", f, s, exclude_known=exclude_known))
    return out


def run_cases(todo: list[FuzzCase], jobs: int = 2, timeout: float = 60.0,
              progress: Optional[Callable] = None) -> list:
    # The runner passes a root folder to its workers; fuzz workers need none.
    return runner.run(todo, "-", jobs=jobs, timeout=timeout, progress=progress, worker=WORKER)


def tally(todo: list[FuzzCase], results: list) -> dict[str, Counter]:
    per = defaultdict(Counter)
    for c, r in zip(todo, results):
        per[c.family][r.status] += 1
    return per


def report(todo: list[FuzzCase], results: list, failures: int = 30) -> str:
    per = tally(todo, results)
    names = {HANG: "hang"}
    cols = [PASS, WRONG, CRASH, HANG, COMPILE_ERROR, ERROR, SKIP, EXCLUDED]
    lines = [f"{'family':12} {'cases':>6} " + " ".join(f"{names.get(c, c):>13}" for c in cols)]
    total = Counter()
    for family in sorted(per):
        t = per[family]
        total.update(t)
        lines.append(f"{family:12} {sum(t.values()):6} " + " ".join(f"{t[c]:13}" for c in cols))
    lines.append(f"{'all':12} {sum(total.values()):6} " + " ".join(f"{total[c]:13}" for c in cols))
    bad = [r for r in results if r.status in FAILURES]
    if bad and failures:
        lines.append("")
        lines.append(f"failures ({len(bad)}):")
        for r in bad[:failures]:
            lines.append(f"  {names.get(r.status, r.status):13} {r.id}: {r.detail[:300]}")
    return "\n".join(lines)


def shrink_and_save(case: FuzzCase, result, out_dir: str, jobs: int = 2,
                    timeout: float = 60.0, attempts: int = 60) -> str:
    """Shrink a failing case's program and write its reproducer under `out_dir`:
    NAME.json (the program), NAME.mlir (what mlxc compiled), NAME.npz (the inputs) and
    NAME.py (runs it and prints the verdict). Returns the reproducer's path."""
    from . import shrink
    from .execute import enable_x64

    enable_x64()
    program = case.to_program()
    sig = shrink.signature(result.status, result.detail)
    counter = [0]

    def judge(programs: list[Program]) -> list[tuple[str, str]]:
        batch = []
        for p in programs:
            counter[0] += 1
            batch.append(FuzzCase(f"shrink/{counter[0]}", p.family, case.seed, p.to_json()))
        return [(r.status, r.detail) for r in run_cases(batch, jobs=jobs, timeout=timeout)]

    program, _ = shrink.shrink(program, sig, judge, attempts=attempts, batch=max(1, jobs))
    final = judge([program])[0]
    return save(program, case, final, out_dir)


def _raw(a):
    """An ml_dtypes array (bf16, fp8, int4, ...) as unsigned integers of its width: numpy
    saves fp8 with a descriptor ('<f1') it cannot read back; the script views them."""
    import numpy as np

    a = np.asarray(a)
    if a.dtype.type.__module__.startswith("ml_dtypes"):
        return a.view(f"u{a.dtype.itemsize}")
    return a


def save(program: Program, case: FuzzCase, verdict: tuple[str, str], out_dir: str) -> str:
    import numpy as np

    from . import judge
    from .execute import reference
    from .program import make_inputs

    os.makedirs(out_dir, exist_ok=True)
    name = os.path.join(out_dir, case.id.replace("/", "-"))
    inputs = make_inputs(program)
    meta = {"case": case.id, "status": verdict[0], "detail": verdict[1],
            "ulps": judge.budget(program), "program": program.to_json()}
    try:
        text, expected, meta["scale"] = reference(program, inputs)
        meta["expected_dtypes"] = [np.asarray(e).dtype.name for e in expected]
        np.savez(name + ".expected.npz", *[_raw(e) for e in expected])
    except Exception as e:  # the reference refuses the shrunk program: keep the JSON
        text = f"// no module: {e}\n"
    with open(name + ".mlir", "w") as f:
        f.write(text)
    meta["input_dtypes"] = [a.dtype.name for a in inputs]
    np.savez(name + ".npz", *[_raw(a) for a in inputs])
    with open(name + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    with open(name + ".py", "w") as f:
        f.write(_SCRIPT.replace("CASE", case.id).replace("STATUS", verdict[0])
                .replace("NAME", os.path.basename(name)))
    return name + ".py"


_SCRIPT = '''"""Reproducer of fuzz case CASE (STATUS): python NAME.py

Compiles NAME.mlir with whichever mlxc is importable, runs it on NAME.npz and
compares with the reference's results (NAME.expected.npz) within the program's
budget (NAME.json); a crash kills this process."""
import json, os, sys
import ml_dtypes
import numpy as np
import mlxc

here = os.path.dirname(os.path.abspath(__file__))
meta = json.load(open(os.path.join(here, "NAME.json")))


def arrays(path, dtypes):
    with np.load(path) as d:
        return [d[f"arr_{i}"].view(np.dtype(getattr(ml_dtypes, t, t))) for i, t in enumerate(dtypes)]


def compare(a, e, ulps, scale):
    try:
        from mlxc.fuzz.judge import compare as judge
        return judge(a, e, ulps, scale)
    except ImportError:
        if e.dtype.kind not in "fcV":
            return None if np.array_equal(a, e) else "differs"
        tol = max(ulps, 1) * float(np.finfo(np.float32).eps) * scale
        same = np.isclose(a.astype(np.complex128), e.astype(np.complex128), rtol=tol, atol=tol, equal_nan=True)
        return None if same.all() else f"{int((~same).sum())} elements differ"


inputs = arrays(os.path.join(here, "NAME.npz"), meta["input_dtypes"])
expected = arrays(os.path.join(here, "NAME.expected.npz"), meta["expected_dtypes"])
out = mlxc.compile(os.path.join(here, "NAME.mlir"))(*inputs)
out = list(out) if isinstance(out, tuple) else [out]
problems = [f"result {i}: {p}" for i, (a, e) in enumerate(zip(out, expected))
            if (p := compare(np.asarray(a), e, meta["ulps"], meta["scale"]))]
print("\\n".join(problems) or "pass")
sys.exit(1 if problems else 0)
'''


def main(count: int, seed: int, family: Optional[str], jobs: int, timeout: float,
         out: Optional[str], quiet: bool = False, shrink_limit: int = 10,
         exclude_known: bool = False) -> int:
    import time

    todo = cases(count, seed, family, exclude_known)
    done = [0]

    def progress(result):
        done[0] += 1
        if not quiet and (done[0] % 100 == 0 or done[0] == len(todo)):
            print(f"  {done[0]}/{len(todo)} cases", file=sys.stderr, flush=True)

    start = time.perf_counter()
    results = run_cases(todo, jobs=jobs, timeout=timeout, progress=progress)
    print(report(todo, results))
    print(f"# {len(todo)} cases in {time.perf_counter() - start:.0f} s with {jobs} workers")
    bad = [(c, r) for c, r in zip(todo, results) if r.status in FAILURES]
    if out and bad:
        for c, r in bad[:shrink_limit]:
            path = shrink_and_save(c, r, out, jobs=jobs, timeout=timeout)
            print(f"reproducer: {path}")
    return 1 if bad else 0
