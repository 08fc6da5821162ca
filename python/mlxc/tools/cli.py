"""The `mlxc` command: run a program, print pipelines and settings.

    mlxc run model.mlir --random            compile, run on random inputs, print outputs
    mlxc run model.mlir --inputs x.npz      ... on inputs from an .npz file
    mlxc run model.mlir --random --bench    ... and time compile and run
    mlxc compile model.mlir -o model.so     an artifact for mlxc.load and C (+ model.h)
    mlxc pipeline [--target cpu]            the stages, passes and reasons
    mlxc settings                           every MLXC_* setting and its value
    mlxc fuzz --count N --seed S            random programs against JAX / the interpreter
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Optional

import numpy as np


def _random_inputs(signature, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for spec in signature.inputs:
        dt = spec.dtype
        if dt == np.bool_:
            a = rng.random(spec.shape) < 0.5
        elif dt.kind in "iu":
            lo = 0 if dt.kind == "u" else -8
            a = rng.integers(lo, 9, size=spec.shape).astype(dt)
        elif dt.kind == "c":
            a = (rng.standard_normal(spec.shape) + 1j * rng.standard_normal(spec.shape)).astype(dt)
        else:
            a = rng.standard_normal(spec.shape).astype(np.float32).astype(dt)
        out.append(np.asarray(a, dtype=dt))
    return out


def _npz_inputs(path: str, signature) -> list[np.ndarray]:
    with np.load(path) as data:
        keys = list(data.keys())
        names = [s.name for s in signature.inputs]
        if all(n in keys for n in names):
            return [data[n] for n in names]
        positional = [f"arr_{i}" for i in range(len(names))]
        if all(k in keys for k in positional):
            return [data[k] for k in positional]
        raise ValueError(f"{path}: expected arrays named {', '.join(names)} (or arr_0..arr_"
                         f"{len(names) - 1} from np.savez), found {', '.join(keys) or 'none'}")


def _print_signature(signature) -> None:
    """The signature as comment lines (a long one prints one argument per line)."""
    print("# " + str(signature).replace("\n", "\n# "))


SUMMARY_ELEMENTS = 1000  # outputs larger than this print as a summary unless --full


def _summary(value: np.ndarray) -> str:
    a = np.asarray(value)
    if a.dtype.kind not in "biufc":
        try:
            a = a.astype(np.float32)  # bf16, fp8: ml_dtypes types numpy cannot reduce
        except (TypeError, ValueError):
            return f"shape {a.shape}, dtype {value.dtype}"
    if a.dtype.kind == "c":
        a = np.abs(a)
        what = "|x| "
    else:
        what = ""
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    stats = (f"{what}min {finite.min():.6g}, max {finite.max():.6g}, mean {finite.mean():.6g}"
             if finite.size else "no finite values")
    bad = a.size - finite.size
    return (f"shape {a.shape}, dtype {value.dtype}: {stats}"
            + (f", {bad} not finite" if bad else "") + " (--full prints every element)")


def _print_outputs(signature, outputs, full: bool = False) -> None:
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    threshold = sys.maxsize if full else 200
    with np.printoptions(threshold=threshold, edgeitems=4, linewidth=100):
        for spec, value in zip(signature.outputs, outputs):
            print(f"{spec}:")
            if not full and np.size(value) > SUMMARY_ELEMENTS:
                print(_summary(value))
            else:
                print(np.asarray(value))


def _run(args) -> int:
    import mlxc

    t0 = time.perf_counter()
    exe = mlxc.compile(args.file, target=args.target, entry=args.entry)
    compile_s = time.perf_counter() - t0
    inputs = _npz_inputs(args.inputs, exe.signature) if args.inputs else \
        _random_inputs(exe.signature, args.seed)
    outputs = exe(*inputs)
    _print_signature(exe.signature)
    _print_outputs(exe.signature, outputs, args.full)
    if args.bench:
        times = []
        deadline = time.perf_counter() + args.bench_seconds
        while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 10000):
            t = time.perf_counter()
            exe(*inputs)
            times.append(time.perf_counter() - t)
        print(f"# compile: {compile_s * 1e3:.1f} ms"
              + (f" (a compile cache hit: {exe.from_cache})" if getattr(exe, "from_cache", None)
                 else ""))
        print(f"# run: median {statistics.median(times) * 1e6:.1f} us, "
              f"min {min(times) * 1e6:.1f} us over {len(times)} calls")
    return 0


def _compile(args) -> int:
    import mlxc

    out = args.output
    options = {"target_triple": args.target_triple} if args.target_triple else {}
    if args.target_triple and not out.endswith(".o"):
        raise ValueError(f"{out}: compiling for {args.target_triple} writes an object file; "
                         "name it NAME.o and link it with that target's C compiler")
    exe = mlxc.compile(args.file, target=args.target, entry=args.entry, **options)
    exe.save(out)  # a program with '?' dimensions raises the reason here
    from mlxc.targets.cpu import link

    header = args.header or os.path.splitext(out)[0] + ".h"
    manifest = exe.manifest if getattr(exe, "manifest", None) else mlxc.load(out).manifest
    with open(header, "w") as f:
        f.write(link.c_header(manifest, os.path.basename(out)))
    _print_signature(exe.signature)
    print(f"wrote {out} ({os.path.getsize(out)} bytes) and {header}")
    return 0


def _pipeline(args) -> int:
    import mlxc

    print(mlxc.pipeline(args.target, args.entry).describe())
    return 0


def _fusion(args) -> int:
    import mlxc

    print(mlxc.fusion_report(args.file, entry=args.entry))
    return 0


def _settings(args) -> int:
    from mlxc import settings

    for env, value, doc in settings.table():
        print(f"{env:24} {value:40} {doc}")
    return 0


def _conformance(args) -> int:
    import json

    from mlxc.conformance import runner, suites

    if not os.path.isdir(os.path.join(args.dir, "interpret")) and \
            not os.path.isdir(os.path.join(args.dir, "testdata")):
        raise ValueError(f"{args.dir}: no interpret/ or testdata/ folder (expected the "
                         "StableHLO conformance data, e.g. ../shared/conformance/stablehlo)")
    cases = suites.discover(args.dir)
    if args.suite:
        wanted = set(args.suite.split(","))
        cases = [c for c in cases if c.suite in wanted]
    if args.filter:
        cases = [c for c in cases if args.filter in c.id]
    if args.sample:
        cases = suites.sample(cases, args.sample)
    done = [0]

    def progress(result):
        done[0] += 1
        if not args.quiet and (done[0] % 100 == 0 or done[0] == len(cases)):
            print(f"  {done[0]}/{len(cases)} cases", file=sys.stderr, flush=True)

    start = time.perf_counter()
    results = runner.run(cases, args.dir, jobs=args.jobs, timeout=args.timeout, progress=progress)
    print(runner.report(cases, results, families=not args.no_families, failures=args.failures))
    print(f"# {len(cases)} cases in {time.perf_counter() - start:.0f} s with {args.jobs} workers")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.to_json() for r in results], f, indent=1)
    suites_tally, _ = runner.summarize(cases, results)
    return 0 if all(t.passed == t.total for t in suites_tally.values()) else 1


def _fuzz(args) -> int:
    from mlxc.fuzz import run

    return run.main(args.count, args.seed, args.family, args.jobs, args.timeout, args.out,
                    quiet=args.quiet, shrink_limit=args.shrink, exclude_known=args.exclude_known)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mlxc", description="mlxc: a StableHLO compiler")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="compile a program and run it")
    run.add_argument("file", help=".mlir text, MLIR bytecode or a StableHLO artifact")
    src = run.add_mutually_exclusive_group()
    src.add_argument("--inputs", help=".npz file of inputs (by argument name or position)")
    src.add_argument("--random", action="store_true", help="random inputs (the default)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--entry", default="main")
    run.add_argument("--target", default="cpu")
    run.add_argument("--full", action="store_true",
                     help=f"print every element of outputs over {SUMMARY_ELEMENTS} elements "
                          f"(summarised as shape, dtype, min, max and mean by default)")
    run.add_argument("--bench", action="store_true", help="also time compile and run")
    run.add_argument("--bench-seconds", type=float, default=1.0)
    run.set_defaults(func=_run)

    comp = sub.add_parser("compile", help="compile a program into an artifact and a C header")
    comp.add_argument("file", help=".mlir text, MLIR bytecode or a StableHLO artifact")
    comp.add_argument("-o", "--output", required=True,
                      help="the artifact: NAME.so (for this machine) or NAME.o (--target-triple)")
    comp.add_argument("--header", help="the C header to write (default: NAME.h beside the output)")
    comp.add_argument("--target-triple", help="compile for another CPU, e.g. aarch64-linux-gnu "
                      "(writes an object file; needs llvmlite)")
    comp.add_argument("--entry", default="main")
    comp.add_argument("--target", default="cpu")
    comp.set_defaults(func=_compile)

    pipe = sub.add_parser("pipeline", help="print a target's pipeline")
    pipe.add_argument("--target", default="cpu")
    pipe.add_argument("--entry", default="main")
    pipe.set_defaults(func=_pipeline)

    conf = sub.add_parser("conformance", help="run StableHLO's conformance suites")
    conf.add_argument("dir", help="the suites' folder (holding interpret/ and testdata/)")
    conf.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    conf.add_argument("--suite", help="comma-separated: interpret, testdata, dynamic, quantized")
    conf.add_argument("--filter", help="only cases whose id contains this text")
    conf.add_argument("--sample", type=int, help="a fixed, evenly spread sample of this many cases")
    conf.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    conf.add_argument("--json", help="write every result to this JSON file")
    conf.add_argument("--failures", type=int, default=50, help="list at most this many failures")
    conf.add_argument("--no-families", action="store_true", help="only the per-suite table")
    conf.add_argument("-q", "--quiet", action="store_true")
    conf.set_defaults(func=_conformance)

    fus = sub.add_parser("fusion", help="print a program's fusion groups on the CPU: fused "
                         "ops, why inputs were not fused, schedule or kernel, cost")
    fus.add_argument("file")
    fus.add_argument("--entry", default="main")
    fus.set_defaults(func=_fusion)

    fz = sub.add_parser("fuzz", help="differential fuzzing: random programs against jax.jit "
                        "and the StableHLO interpreter")
    fz.add_argument("--count", type=int, default=100, help="how many programs")
    fz.add_argument("--seed", type=int, default=0, help="the first case's seed (cases are "
                    "seed .. seed+count-1)")
    fz.add_argument("--family", help="only this family (default: all, in turn)")
    fz.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    fz.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    fz.add_argument("--out", help="shrink failures and write their reproducers here")
    fz.add_argument("--shrink", type=int, default=10, help="shrink at most this many failures")
    fz.add_argument("--exclude-known", action="store_true",
                    help="do not run programs matching a known bug (mlxc/fuzz/known.py)")
    fz.add_argument("-q", "--quiet", action="store_true")
    fz.set_defaults(func=_fuzz)

    st = sub.add_parser("settings", help="print every MLXC_* setting")
    st.set_defaults(func=_settings)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    from mlxc import CompileError

    try:
        return args.func(args)
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return 1
    except (TypeError, ValueError, OSError, KeyError) as e:
        print(f"mlxc: error: {str(e).strip(chr(39))}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
