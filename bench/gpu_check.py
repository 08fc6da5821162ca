"""One run on a machine with an NVIDIA GPU and mlxc installed: compile, then check and
time on the GPU, against JAX on the CPU and XLA on the same GPU.

    python bench/gpu_check.py                  # everything (a few minutes)
    python bench/gpu_check.py --skip-corpus    # microbenchmarks, models and bench programs only
    python bench/gpu_check.py -k matmul        # programs whose name contains this
    python bench/gpu_check.py --json out.json  # also write every row as JSON

Needs `pip install '.[cuda,test]'` and, for the XLA columns, JAX's CUDA plugin. Exits 2
with "no CUDA driver found" where there is no GPU. It is bench/gpu_prepare.py and
bench/gpu_run.py in one process (which see for what is compiled, checked and timed);
on a GPU machine without the compiler, run those two apart (docs/gpu.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mlxc.runtime import cuda  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-corpus", action="store_true")
    ap.add_argument("-k", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", help="keep the bundle and results here (default: a temporary folder)")
    ap.add_argument("--json", help="write the result rows here")
    opts = ap.parse_args(argv)
    try:
        device = cuda.cuda_devices()[0]
    except cuda.CudaUnavailable as e:
        print(e, file=sys.stderr)
        return 2
    import gpu_prepare
    import gpu_run
    from mlxc.targets.cuda.ptx import PTX_FEATURES

    chip = device.chip if device.chip in PTX_FEATURES else "sm_90"
    print(f"{device}; PTX for {chip}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = opts.out or tmp
        bundle = os.path.join(out, "bundle")
        gpu_prepare.main([bundle, "--chip", chip] + [a for k in opts.k for a in ("-k", k)])
        run_args = ["--bundle", bundle, "--out", os.path.join(out, "results"),
                    "--repeat", str(opts.repeat)]
        if opts.skip_corpus:
            run_args += ["--group", "micro", "--group", "model", "--group", "bench"]
        code = gpu_run.main(run_args)
        with open(os.path.join(out, "results", "results.jsonl")) as f:
            rows = [json.loads(line) for line in f if '"started"' not in line]
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)
    bad = [r for r in rows if r.get("status") not in ("ok", "info")]
    return code or (1 if bad else 0)


if __name__ == "__main__":
    sys.exit(main())
