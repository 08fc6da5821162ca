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
from .execute import COMPILE_ERROR, CRASH, ERROR, HANG, OUTCOMES, PASS, SKIP, WRONG, FuzzCase
from .generate import FAMILIES, mixed_families
from .program import Program

WORKER = [sys.executable, "-m", "mlxc.fuzz.worker"]
ALL_FAMILIES = list(FAMILIES) + ["models"]
FAILURES = (WRONG, CRASH, HANG, COMPILE_ERROR, ERROR)


def cases(count: int, seed: int = 0, family: Optional[str] = None) -> list[FuzzCase]:
    """Cases seed .. seed+count-1: of `family`, or of each family in turn (by weight)."""
    if family and family not in ALL_FAMILIES:
        raise ValueError(f"unknown fuzz family {family!r}; families: {', '.join(ALL_FAMILIES)}")
    mixed = mixed_families() + ["models"]
    out = []
    for s in range(seed, seed + count):
        f = family or mixed[s % len(mixed)]
        out.append(FuzzCase(f"{f}/{s}", f, s))
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
    cols = [PASS, WRONG, CRASH, HANG, COMPILE_ERROR, ERROR, SKIP]
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

    if case.family != "models":
        program, _ = shrink.shrink(program, sig, judge, attempts=attempts, batch=max(1, jobs))
    final = judge([program])[0] if case.family != "models" else (result.status, result.detail)
    return save(program, case, final, out_dir)


def save(program: Program, case: FuzzCase, verdict: tuple[str, str], out_dir: str) -> str:
    import numpy as np

    from .execute import reference
    from .program import make_inputs

    os.makedirs(out_dir, exist_ok=True)
    name = os.path.join(out_dir, case.id.replace("/", "-"))
    inputs = make_inputs(program)
    with open(name + ".json", "w") as f:
        json.dump({"case": case.id, "status": verdict[0], "detail": verdict[1],
                   "program": program.to_json() if case.family != "models" else None}, f, indent=1)
    try:
        text, _, _ = reference(program, inputs)
        with open(name + ".mlir", "w") as f:
            f.write(text)
    except Exception as e:  # the reference refuses the shrunk program: keep the JSON
        with open(name + ".mlir", "w") as f:
            f.write(f"// no module: {e}\n")
    np.savez(name + ".npz", *inputs)
    with open(name + ".py", "w") as f:
        f.write(_SCRIPT.format(case=case.id, status=verdict[0], json=os.path.basename(name) + ".json",
                               family=case.family, seed=case.seed))
    return name + ".py"


_SCRIPT = '''"""Reproducer of fuzz case {case} ({status}): python {{this file}}.

Compiles the program with mlxc, runs it on its inputs and judges the result against
the reference, printing the verdict (a crash kills this process)."""
import json, os, sys
from mlxc.fuzz.execute import FuzzCase, enable_x64, run_case

enable_x64()
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "{json}")) as f:
    program = json.load(f)["program"]
r = run_case(FuzzCase("{case}", "{family}", {seed}, program))
print(r.status, r.detail)
sys.exit(0 if r.status == "pass" else 1)
'''


def main(count: int, seed: int, family: Optional[str], jobs: int, timeout: float,
         out: Optional[str], quiet: bool = False, shrink_limit: int = 10) -> int:
    import time

    todo = cases(count, seed, family)
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
