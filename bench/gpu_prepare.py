"""Compile here, run on a GPU machine that has no compiler: the GPU run's bundle.

    python bench/gpu_prepare.py DIR             # every program (a few minutes)
    python bench/gpu_prepare.py DIR -k gpt      # (re)compile only names containing one of these
    cd DIR && PYTHONPATH=python python3 bench/gpu_run.py --out OUT   # there (see gpu_run.py)

mlxc's compiler needs the torch-mlir wheel; its runtime (mlxc.runtime.cuda) needs only
numpy and NVIDIA's driver bindings. This compiles, for target="cuda" and one chip, the
test corpus (test/pytest/corpus.py), the programs of test_cuda.py's reduction tests,
bench/programs.py, and bench/gpu_programs.py's microbenchmarks and models, and writes
into DIR a copy of the mlxc package (the runtime is all the GPU side imports of it),
the GPU run's scripts, and per program a pickle of what a CudaExecutable is made of
(signature, PTX, launch plan) with JAX's outputs on the CPU as the reference and, for
the small corpus programs, the inputs themselves. Larger inputs are made again on the
device from the same seed and checked against a checksum of the bytes made here.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "test", "pytest")]

import jax  # noqa: E402
from jax import export  # noqa: E402

import gpu_programs  # noqa: E402
import mlxc  # noqa: E402

# Inputs up to this size travel in the bundle; larger ones are made on the device.
MAX_SHIPPED_BYTES = 1 << 20
# References up to this size travel; larger ones come from XLA on the device.
MAX_REFERENCE_BYTES = 16 << 20


def _programs():
    """(group, name, fn, make_inputs, rtol, x64, extra fields) for every program."""
    from corpus import PROGRAMS
    from programs import BENCHES

    for p in PROGRAMS:
        yield "corpus", p.name, p.fn, p.make_inputs, p.rtol, p.x64, {}
    for b in BENCHES:
        yield "bench", b.name, b.fn, b.make_inputs, 1e-4, False, {"flops": b.flops}
    for g, group in ((gpu_programs.REDUCTIONS, "test_cuda"), (gpu_programs.MODELS, "model"),
                     (gpu_programs.MICRO, "micro")):
        for p in g:
            yield group, p.name, p.fn, p.make_inputs, p.rtol, False, {
                "flops": p.flops, "kind": p.kind, "tensor_dtype": p.tensor_dtype}


def _outputs(value) -> list:
    return [np.asarray(v) for v in (value if isinstance(value, (tuple, list)) else (value,))]


def prepare_one(out_dir: str, group: str, name: str, fn, make_inputs, rtol: float, x64: bool,
                extra: dict, chip: str) -> dict:
    args = make_inputs(np.random.default_rng(0))
    nbytes = sum(a.nbytes for a in args)
    entry = {"group": group, "name": name, "rtol": rtol, "x64": x64, "seed": 0,
             "checksum": gpu_programs.checksum(args), "input_bytes": nbytes, **extra}
    with jax.enable_x64(x64):
        exported = export.export(jax.jit(fn))(*args)
        text = exported.mlir_module()
        outs = jax.eval_shape(fn, *args)
    out_bytes = sum(int(np.prod(o.shape)) * np.dtype(o.dtype).itemsize
                    for o in jax.tree_util.tree_leaves(outs))
    entry["min_bytes"] = nbytes + out_bytes  # each input read once, each output written once
    start = time.perf_counter()
    try:
        exe = mlxc.compile(text, target="cuda", chip=chip)
    except Exception as e:  # reported with the program, as on the device
        entry["compile_error"] = f"{type(e).__name__}: {str(e)[:2000]}"
        return entry
    entry["compile_s"] = time.perf_counter() - start
    entry["kernels"] = sum(1 for s in exe.plan["steps"] if s[0] == "launch")
    record = {"signature": exe.signature.to_json(), "ptx": exe.ptx, "plan": exe.plan,
              "chip": exe.chip, "inputs": None, "expected": None}
    if nbytes <= MAX_SHIPPED_BYTES:
        record["inputs"] = list(args)
    if group != "micro" and out_bytes <= MAX_REFERENCE_BYTES:
        with jax.enable_x64(x64), jax.default_matmul_precision("highest"):
            record["expected"] = _outputs(jax.jit(fn)(*args))
    entry["reference"] = "jax-cpu" if record["expected"] is not None else "xla-gpu-highest"
    with open(os.path.join(out_dir, "progs", f"{group}.{name}.pkl"), "wb") as f:
        pickle.dump(record, f, protocol=4)
    return entry


def copy_sources(out_dir: str) -> None:
    """The mlxc package (the GPU side imports only its runtime) and the run's scripts."""
    target = os.path.join(out_dir, "python", "mlxc")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "python", "mlxc"), target,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.dylib"))
    os.makedirs(os.path.join(out_dir, "bench"), exist_ok=True)
    for name in ("gpu_run.py", "gpu_run.sh", "gpu_programs.py", "programs.py"):
        shutil.copy(os.path.join(HERE, name), os.path.join(out_dir, "bench", name))
    shutil.copy(os.path.join(ROOT, "test", "pytest", "fake_cuda.py"),
                os.path.join(out_dir, "bench", "fake_cuda.py"))  # for gpu_run.py --dry-run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("-k", action="append", default=[], help="only names containing this")
    ap.add_argument("--chip", default="sm_90")
    opts = ap.parse_args(argv)
    os.makedirs(os.path.join(opts.out_dir, "progs"), exist_ok=True)
    copy_sources(opts.out_dir)
    manifest = []
    with mlxc.settings.override(cache=False):
        for group, name, fn, make_inputs, rtol, x64, extra in _programs():
            if opts.k and not any(k in name for k in opts.k):
                continue
            try:
                entry = prepare_one(opts.out_dir, group, name, fn, make_inputs, rtol, x64,
                                    extra, opts.chip)
            except Exception:
                entry = {"group": group, "name": name,
                         "prepare_error": traceback.format_exc(limit=3)[-2000:]}
            manifest.append(entry)
            status = entry.get("compile_error") or entry.get("prepare_error") or \
                f"{entry['kernels']} kernels, {entry['compile_s']:.2f} s"
            print(f"{group:9s} {name:32s} {status.splitlines()[0][:150]}", flush=True)
    path = os.path.join(opts.out_dir, "manifest.json")
    if opts.k and os.path.exists(path):  # recompiled some: keep the others' entries
        done = {(e["group"], e["name"]) for e in manifest}
        with open(path) as f:
            manifest = [e for e in json.load(f)["programs"]
                        if (e["group"], e["name"]) not in done] + manifest
    with open(path, "w") as f:
        json.dump({"chip": opts.chip, "programs": manifest}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(opts.out_dir) for n in ns)
    print(f"{len(manifest)} programs, {total / 2**20:.1f} MiB in {opts.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
