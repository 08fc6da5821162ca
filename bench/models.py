"""mlxc against jax.jit (XLA CPU) on whole models (bench/model_zoo.py), each in several sizes.

    python bench/models.py                          # every model, every size
    python bench/models.py --quick                  # smallest size of each, fewer repeats (~3 min)
    python bench/models.py --models gpt_fwd,lstm    # some models
    python bench/models.py --sizes 4l_d256_s128_b2  # some sizes (by label, any model)
    python bench/models.py --isolate                # each model in its own process (crashes, hangs)
    python bench/models.py --json out.json          # also write the rows as JSON

Per model and size: run time of mlxc and XLA (best of --repeat interleaved batches)
and their ratio, cold compile time of both and its ratio, temporary memory, and the
largest relative error of mlxc's results against XLA's with a verdict: ok, noisy
(XLA as far from a float64 run as mlxc: an ill-conditioned result) or WRONG (flagged
in the table and the summary). bench/timing.py says how each figure is measured. A
model that fails to compile or crashes is a row with its error; the run goes on.
The summary gives the geomean run-time and compile ratios, the worst models, and the
12-layer decoder's compile time against XLA's (the performance issue's 18 s vs 1.6 s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from model_zoo import MODELS  # noqa: E402
from timing import (compare, error_text, finish, fmt_bytes, fmt_time, geomean,  # noqa: E402
                    warm_up)

BIG_DECODER = ("gpt_fwd", "12l_d384_s64_b2")


def cases(models: list[str], sizes: list[str], smallest: bool) -> list[tuple[str, str]]:
    known = {m.name: m for m in MODELS}
    unknown = [n for n in models if n not in known]
    if unknown:
        raise SystemExit(f"unknown models {unknown}; known: {', '.join(known)}")
    out = []
    for m in MODELS:
        if models and m.name not in models:
            continue
        labels = [lb for lb in m.sizes if not sizes or lb in sizes]
        out += [(m.name, lb) for lb in (labels[:1] if smallest else labels)]
    return out


def run_case(name: str, size: str, rounds: int, budget_s: float) -> dict:
    model = next(m for m in MODELS if m.name == name)
    row = dict(model=name, size=size, kind=model.kind)
    try:
        fn, args = model.build(np.random.default_rng(0), **model.sizes[size])
        row.update(compare(fn, args, rounds, budget_s))
    except Exception as e:  # a failing model is a row of the table, not the end of the run
        row["error"] = error_text(e)
    return row


def run_isolated(name: str, size: str, a) -> dict:
    """The case in a child process: a crash or a hang is this row's error, not the run's."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", f"{name}:{size}",
           "--repeat", str(a.repeat), "--batch-ms", str(a.batch_ms)]
    row = dict(model=name, size=size)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return dict(row, error=f"timed out after {a.timeout:.0f} s")
    lines = p.stdout.strip().splitlines()
    if p.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return dict(row, error=f"child exited with {p.returncode}: {tail[:150]}")


def print_table(rows: list[dict]) -> None:
    head = (f"{'model':<13} {'size':<19} {'mlxc':>9} {'XLA':>9} {'ratio':>6}  "
            f"{'compile mlxc':>12} {'XLA':>8} {'ratio':>6}  {'temp mlxc':>9} {'XLA':>9}  "
            f"{'err':>7} check")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['model']:<13} {r['size']:<19} FAILED: {r['error']}")
            continue
        print(f"{r['model']:<13} {r['size']:<19} {fmt_time(r['mlxc_s']):>9} "
              f"{fmt_time(r['xla_s']):>9} {r['ratio']:6.2f}  "
              f"{fmt_time(r['mlxc_compile_s']):>12} {fmt_time(r['xla_compile_s']):>8} "
              f"{r['compile_ratio']:6.2f}  {fmt_bytes(r['mlxc_temp_bytes']):>9} "
              f"{fmt_bytes(r['xla_temp_bytes']):>9}  {r['rel_err']:7.1e} {r['check']}")
    print("-" * len(head))
    ok = [r for r in rows if "error" not in r]
    label = lambda r: f"{r['model']}/{r['size']}"  # noqa: E731
    if ok:
        print(f"geomean run-time ratio mlxc/XLA: {geomean([r['ratio'] for r in ok]):.2f}   "
              f"geomean compile ratio: {geomean([r['compile_ratio'] for r in ok]):.2f}   "
              f"({len(ok)} models)")
        worst = sorted(ok, key=lambda r: -r["ratio"])[:3]
        print("worst run time: " + ", ".join(f"{label(r)} {r['ratio']:.2f}" for r in worst))
        worst = sorted(ok, key=lambda r: -r["compile_ratio"])[:3]
        print("worst compile:  " + ", ".join(f"{label(r)} {r['compile_ratio']:.2f}" for r in worst))
    big = [r for r in ok if (r["model"], r["size"]) == BIG_DECODER]
    for r in big:
        print(f"12-layer decoder ({label(r)}) compile: mlxc {fmt_time(r['mlxc_compile_s'])}, "
              f"XLA {fmt_time(r['xla_compile_s'])} ({r['compile_ratio']:.1f}x)")
    wrong = [label(r) for r in ok if r["check"].startswith("WRONG")]
    failed = [label(r) for r in rows if "error" in r]
    print(f"wrong answers: {', '.join(wrong) if wrong else 'none'}")
    print(f"failed: {', '.join(failed) if failed else 'none'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="", help="comma-separated model names (default: all)")
    p.add_argument("--sizes", default="", help="comma-separated size labels (default: all)")
    p.add_argument("--quick", action="store_true",
                   help="the smallest size of each model, 3 repeats of 20 ms batches")
    p.add_argument("--repeat", type=int, default=None,
                   help="interleaved timed batches per compiler (default 7, --quick 3)")
    p.add_argument("--batch-ms", type=float, default=None,
                   help="wall time of one batch (default 30, --quick 20)")
    p.add_argument("--isolate", action="store_true", help="each model in a child process")
    p.add_argument("--timeout", type=float, default=900.0, help="per model, with --isolate")
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--child", help=argparse.SUPPRESS)  # model:size, row as JSON on stdout
    a = p.parse_args(argv)
    a.repeat = a.repeat or (3 if a.quick else 7)
    a.batch_ms = a.batch_ms or (20.0 if a.quick else 30.0)

    if a.child:
        warm_up()
        name, size = a.child.split(":", 1)
        print(json.dumps(run_case(name, size, a.repeat, a.batch_ms / 1e3)))
        return 0

    todo = cases([n for n in a.models.split(",") if n], [s for s in a.sizes.split(",") if s],
                 a.quick)
    if not todo:
        p.error("no model and size match")
    print(f"mlxc vs jax.jit {jax.__version__} on {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}, {len(todo)} models"
          f"{', isolated' if a.isolate else ''}\n", flush=True)
    if not a.isolate:
        warm_up()
    rows = []
    for name, size in todo:
        row = (run_isolated(name, size, a) if a.isolate
               else run_case(name, size, a.repeat, a.batch_ms / 1e3))
        rows.append(row)
        state = row.get("error") or f"{row['ratio']:.2f}x run, {row['compile_ratio']:.2f}x compile"
        print(f"  done {name}/{size}: {state}", file=sys.stderr, flush=True)
    print_table(rows)
    return finish(rows, a.json)


if __name__ == "__main__":
    sys.exit(main())
