"""One short run on a machine with an NVIDIA GPU: the corpus on the GPU against the CPU
target and JAX, then achieved bandwidth and FLOP/s against the device's peak.

    python bench/gpu_check.py                  # corpus check + benchmarks (a few minutes)
    python bench/gpu_check.py --skip-corpus    # benchmarks only
    python bench/gpu_check.py --json out.json  # also write every figure as JSON

Needs `pip install '.[cuda,test]'`. Exits 2 with "no CUDA driver found" where there is
no GPU. Times are medians over runs with the inputs already on the GPU; each run
includes its launches and temporary allocations, not host transfers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "pytest"))

import mlxc  # noqa: E402
from mlxc.runtime import cuda  # noqa: E402


def _chip(device) -> str:
    from mlxc.targets.cuda.ptx import PTX_FEATURES

    return device.chip if device.chip in PTX_FEATURES else "sm_90"


def check_corpus(chip: str) -> dict:
    from corpus import PROGRAMS
    from helpers import assert_matches, export_program

    passed, failed = [], {}
    for p in PROGRAMS:
        args = p.make_inputs(np.random.default_rng(0))
        try:
            text, _, expected = export_program(p.fn, *args, x64=p.x64)
            on_gpu = mlxc.compile(text, target="cuda", chip=chip)(*args)
            on_cpu = mlxc.compile(text)(*args)
            assert_matches(on_gpu, expected, p.rtol)                     # against JAX
            assert_matches(on_gpu, tuple(np.asarray(o) for o in
                                         (on_cpu if isinstance(on_cpu, tuple) else (on_cpu,))),
                           p.rtol)                                       # against the CPU target
            passed.append(p.name)
        except Exception as e:  # report every program, not just the first failure
            failed[p.name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        print(f"  {'ok  ' if p.name in passed else 'FAIL'} {p.name}"
              + (f"  ({failed[p.name]})" if p.name in failed else ""), flush=True)
    return {"passed": len(passed), "failed": failed, "total": len(PROGRAMS)}


def _benchmarks():
    """(name, kind, function, inputs, bytes moved, flops)."""
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    n = 1 << 26  # 64M elements: 256 MiB per f32 array
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    rows = rng.standard_normal((8192, 8192), dtype=np.float32)
    m = 2048
    x, w = (rng.standard_normal((m, m), dtype=np.float32) for _ in range(2))
    flat = rng.standard_normal(1 << 22, dtype=np.float32)
    return [
        ("axpy_fma", "elementwise", lambda a, b, c: a * b + c, (a, b, c), 4 * 4 * n, 2 * n),
        ("gelu", "elementwise", lambda a: 0.5 * a * (1 + jnp.tanh(0.79788456 * (a + 0.044715 * a ** 3))),
         (a,), 2 * 4 * n, 10 * n),
        ("sum_columns", "reduction", lambda r: r.sum(0), (rows,), rows.nbytes + 4 * 8192, rows.size),
        ("sum_rows", "reduction", lambda r: r.sum(1), (rows,), rows.nbytes + 4 * 8192, rows.size),
        ("sum_all_4M", "reduction", lambda f: f.sum(), (flat,), flat.nbytes, flat.size),
        ("matmul_2048", "matmul", lambda x, w: x @ w, (x, w), 3 * 4 * m * m, 2 * m ** 3),
    ]


def run_benchmarks(device, chip: str, repeat: int) -> list[dict]:
    import jax
    from jax import export

    rows = []
    for name, kind, fn, args, nbytes, flops in _benchmarks():
        text = export.export(jax.jit(fn))(*args).mlir_module()
        start = time.perf_counter()
        exe = mlxc.compile(text, target="cuda", chip=chip)
        compile_s = time.perf_counter() - start
        got = exe(*args)
        want = np.asarray(jax.jit(fn)(*args))
        err = float(np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-30))
        seconds = exe.time(*args, repeat=repeat)
        row = {"name": name, "kind": kind, "compile_s": compile_s, "seconds": seconds,
               "error_vs_jax": err, "GB/s": nbytes / seconds / 1e9, "GFLOP/s": flops / seconds / 1e9}
        row["bandwidth_%peak"] = 100 * nbytes / seconds / device.peak_bandwidth if device.peak_bandwidth else None
        row["flops_%peak_fp32"] = 100 * flops / seconds / device.peak_fp32_flops if device.peak_fp32_flops else None
        rows.append(row)
        print(f"  {name:12s} {kind:11s} {seconds * 1e3:9.3f} ms  {row['GB/s']:8.1f} GB/s "
              f"({row['bandwidth_%peak'] or 0:5.1f}% of peak)  {row['GFLOP/s']:9.1f} GFLOP/s "
              f"({row['flops_%peak_fp32'] or 0:5.1f}% of FP32 peak)  rel.err {err:.1e}", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-corpus", action="store_true")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--json", help="write the results here")
    opts = ap.parse_args(argv)
    try:
        gpus = cuda.cuda_devices()
    except cuda.CudaUnavailable as e:
        print(e, file=sys.stderr)
        return 2
    device = gpus[0]
    chip = _chip(device)
    print(f"{device}: peak {device.peak_bandwidth / 1e9:.0f} GB/s, "
          f"{device.peak_fp32_flops / 1e12:.1f} TFLOP/s FP32 (no tensor cores); PTX for {chip}")
    report = {"device": str(device), "chip": chip, "peak_bandwidth": device.peak_bandwidth,
              "peak_fp32_flops": device.peak_fp32_flops}
    if not opts.skip_corpus:
        print("corpus on the GPU against JAX and the CPU target:")
        report["corpus"] = check_corpus(chip)
        print(f"  {report['corpus']['passed']}/{report['corpus']['total']} match")
    print("benchmarks:")
    report["benchmarks"] = run_benchmarks(device, chip, opts.repeat)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0 if not report.get("corpus", {}).get("failed") else 1


if __name__ == "__main__":
    sys.exit(main())
