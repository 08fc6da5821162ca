"""Run a bundle of bench/gpu_prepare.py on a GPU: correctness, then speed against XLA.

    cd BUNDLE && PYTHONUNBUFFERED=1 PYTHONPATH=python python3 bench/gpu_run.py --out OUT
    python bench/gpu_run.py --table OUT/results.jsonl      # the table again, from a result file
    python bench/gpu_run.py --dry-run --out OUT            # no GPU: a stand-in driver runs no kernel

Needs numpy, ml_dtypes, NVIDIA's cuda-bindings and, for the XLA columns, JAX with its
CUDA plugin; not mlxc's compiler. For each program: the PTX loads (the driver compiles
it), the program runs once through `CudaExecutable.__call__` and once more with every
output buffer first filled with 0xFF bytes (NaNs: an element no kernel writes shows),
each compared with JAX's outputs on the CPU (or XLA's on this GPU at the highest
precision, for the microbenchmarks), and the inputs must come back unchanged. Then
the microbenchmarks, models and bench programs are timed: median of CUDA-event times,
launches queued from Python and, separately, replayed from a CUDA graph; XLA's time is
the median wall time of synchronised calls of jax.jit on device arrays.

Each result is appended to OUT/results.jsonl as it comes. A program that runs past its
limit, or a kernel fault (which spoils the CUDA context), ends the process; run the
script again and it resumes after the programs already recorded (`--resume`), marking
the one that was running as failed. Exit code 3 means "run me again".
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import threading
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# H200 SXM datasheet figures; the device's own attributes give bandwidth and FP32 peak
# too, and the table shows the copy rate measured here.
PEAK_TENSOR_FLOPS = {"bf16": 989e12, "f16": 989e12}
PEAK_FP32_FLOPS = 67e12
PEAK_BANDWIDTH = 4.8e12

LIMIT_S = {"corpus": 30, "test_cuda": 30, "bench": 90, "model": 120, "micro": 120}
SPOILED = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "MISALIGNED", "ILLEGAL_INSTRUCTION",
           "HARDWARE_STACK", "ASSERT", "LAUNCH_TIMEOUT", "NOT_PERMITTED", "ECC")


def _log(msg: str) -> None:
    print(msg, flush=True)


class Watchdog:
    """Ends the process when one program runs past its limit (a hung kernel blocks in
    the driver, where no Python exception can reach it)."""

    def __init__(self, results):
        self.results = results
        self.deadline = None
        self.entry: dict = {}
        threading.Thread(target=self._watch, daemon=True).start()

    def arm(self, entry: dict, seconds: float):
        self.entry, self.deadline = entry, time.monotonic() + seconds

    def disarm(self):
        self.deadline = None

    def _watch(self):
        while True:
            time.sleep(0.5)
            if self.deadline is not None and time.monotonic() > self.deadline:
                _log(f"TIMEOUT {self.entry['name']}: ending the process (rerun to resume)")
                self.results.write({"name": self.entry["name"], "group": self.entry["group"],
                                    "status": "timeout"})
                os._exit(3)


def key(row: dict) -> str:
    """Programs of different groups may share a name (corpus.mlp, bench.mlp)."""
    return f"{row.get('group')}.{row['name']}"


class Results:
    def __init__(self, path: str):
        self.path = path
        self.done = {}
        self.started = None
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    row = json.loads(line)
                    if row.get("status") == "started":
                        self.started = row
                    else:
                        self.done[key(row)] = row
                        if self.started and key(self.started) == key(row):
                            self.started = None

    def write(self, row: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(row, default=float) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if row.get("status") != "started":
            self.done[key(row)] = row


def normwise_error(actual, expected) -> float:
    a = np.asarray(actual).astype(np.complex128 if np.iscomplexobj(expected) else np.float64)
    b = np.asarray(expected).astype(a.dtype)
    if b.size == 0:
        return 0.0
    special = ~np.isfinite(b)
    if np.any(np.isnan(a) != np.isnan(b)):
        return float("inf")
    if np.any(a[special & ~np.isnan(b)] != b[special & ~np.isnan(b)]):
        return float("inf")
    a, b = np.where(special, 0, a), np.where(special, 0, b)
    scale = np.linalg.norm(b.ravel())
    diff = np.linalg.norm((a - b).ravel())
    return float(diff / scale) if scale else float(diff)


def compare(outputs, expected, rtol: float) -> tuple[bool, float, str]:
    """(matches, worst normwise error, why not): integers exactly, floats normwise."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if len(outputs) != len(expected):
        return False, float("inf"), f"{len(outputs)} outputs, expected {len(expected)}"
    worst = 0.0
    for i, (o, e) in enumerate(zip(outputs, expected)):
        e = np.asarray(e)
        if o.shape != e.shape or o.dtype != e.dtype:
            return False, float("inf"), f"output {i}: {o.dtype}{o.shape}, expected {e.dtype}{e.shape}"
        if e.dtype.kind in "biu":
            bad = int(np.count_nonzero(o != e))
            if bad:
                return False, float("inf"), f"output {i}: {bad} of {e.size} elements differ"
            continue
        err = normwise_error(o, e)
        worst = max(worst, err)
        if not err <= rtol:
            return False, worst, f"output {i}: normwise error {err:.3e} > {rtol:.1e}"
    return True, worst, ""


def load_program(bundle: str, entry: dict):
    from mlxc.runtime.cuda import CudaExecutable
    from mlxc.runtime.signature import Signature

    with open(os.path.join(bundle, "progs", f"{entry['group']}.{entry['name']}.pkl"), "rb") as f:
        record = pickle.load(f)
    exe = CudaExecutable(Signature.from_json(record["signature"]), record["ptx"], record["plan"],
                         chip=record["chip"])
    return exe, record


def find_fn(entry: dict):
    """The JAX function of a program (for XLA's reference and time), or None."""
    import gpu_programs

    if entry["group"] in ("model", "micro", "test_cuda"):
        for p in gpu_programs.MODELS + gpu_programs.MICRO + gpu_programs.REDUCTIONS:
            if p.name == entry["name"]:
                return p.fn, p.make_inputs
    if entry["group"] == "bench":
        from programs import BENCHES

        for b in BENCHES:
            if b.name == entry["name"]:
                return b.fn, b.make_inputs
    return None, None


def run_poisoned(exe, arrays):
    """Like exe(*arrays), but every output buffer starts as 0xFF bytes on the device."""
    return exe._call([np.ascontiguousarray(a) for a in arrays], poison=0xFF)


def xla_time(fn, args, repeat: int, precision=None) -> tuple[float, float]:
    """(seconds per call when calls are queued back to back, median seconds of one
    synchronised call): the first hides JAX's dispatch behind the GPU's work."""
    import jax

    with jax.default_matmul_precision(precision) if precision else _nothing():
        f = jax.jit(fn)
        dev = [jax.device_put(a) for a in args]
        jax.block_until_ready(f(*dev))
        single = []
        for _ in range(repeat):
            start = time.perf_counter()
            jax.block_until_ready(f(*dev))
            single.append(time.perf_counter() - start)
        queued = []
        for _ in range(5):
            start = time.perf_counter()
            outs = [f(*dev) for _ in range(repeat)]
            jax.block_until_ready(outs)
            queued.append((time.perf_counter() - start) / repeat)
            del outs
    return float(np.median(queued)), float(np.median(single))


def kernel_profile(exe, args, top: int = 6) -> list:
    """The plan's slowest launches, timed one by one with CUDA events: [kernel, grid,
    block, ms]. Costs a launch gap per kernel; for finding the kernel to work on."""
    from mlxc.runtime import cuda

    drv = cuda.driver()
    arrays = [np.ascontiguousarray(a) for a in args]
    stream = cuda.Stream()
    sizes = [a.nbytes for a in arrays] + [t.nbytes for t in exe.signature.outputs]
    buffers = {i: cuda.Buffer(n) for i, n in enumerate(sizes)}
    scratch: dict = {}
    events, steps = [], []
    try:
        for i, a in enumerate(arrays):
            buffers[i].upload(a, stream.handle)
        exe._run(dict(buffers), stream, scratch)

        def mark(step=None):
            event = cuda.check(drv.cuEventCreate(0), "cuEventCreate")
            cuda.check(drv.cuEventRecord(event, stream.handle), "cuEventRecord")
            events.append(event)
            steps.append(step)

        mark()
        exe._enqueue(dict(buffers), stream, scratch, [], after_launch=mark)
        stream.synchronize()
        rows = []
        for k in range(1, len(events)):
            ms = cuda.check(drv.cuEventElapsedTime(events[k - 1], events[k]), "cuEventElapsedTime")
            _, kernel, grid, block, _ = steps[k]
            rows.append([kernel, list(grid), list(block), ms])
    finally:
        for event in events:
            drv.cuEventDestroy(event)
        for buf in list(buffers.values()) + list(scratch.values()):
            buf.free()
        stream.destroy()
    return sorted(rows, key=lambda r: -r[3])[:top]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def xla_reference(fn, args):
    import jax

    with jax.default_matmul_precision("highest"):
        out = jax.jit(fn)(*args)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o) for o in out]


def run_one(bundle: str, entry: dict, opts) -> dict:
    row = {"name": entry["name"], "group": entry["group"]}
    if "compile_error" in entry or "prepare_error" in entry:
        row.update(status="compile_error",
                   error=(entry.get("compile_error") or entry.get("prepare_error"))[:300])
        return row
    exe, record = load_program(bundle, entry)
    fn, make_inputs = find_fn(entry)
    args = record["inputs"]
    if args is None:
        import gpu_programs

        if make_inputs is None:
            raise RuntimeError("inputs neither shipped nor reproducible")
        args = make_inputs(np.random.default_rng(entry["seed"]))
        if gpu_programs.checksum(args) != entry["checksum"]:
            row["inputs_differ"] = True  # numpy here drew other numbers: XLA is the reference
            record["expected"] = None
    args = list(args)
    snapshot = [np.array(a, copy=True) for a in args]

    start = time.perf_counter()
    exe.load()
    row["load_s"] = time.perf_counter() - start
    expected, row["reference"] = record["expected"], "jax-cpu"
    if expected is None:
        if fn is None or opts.no_xla:
            raise RuntimeError("no reference")
        expected, row["reference"] = xla_reference(fn, args), "xla-gpu-highest"
    start = time.perf_counter()
    got = exe(*args)
    row["first_call_s"] = time.perf_counter() - start
    ok, err, why = compare(got, expected, entry["rtol"])
    ok2, err2, why2 = compare(run_poisoned(exe, args), expected, entry["rtol"])
    row["error"] = max(err, err2)
    unchanged = all(np.array_equal(a, b, equal_nan=True) if a.dtype.kind in "fc" else
                    np.array_equal(a, b) for a, b in zip(args, snapshot))
    problems = [p for p in (why, why2 and f"poisoned outputs: {why2}",
                            "" if unchanged else "inputs modified") if p]
    row["status"] = "ok" if ok and ok2 and unchanged else "wrong"
    if problems:
        row["why"] = "; ".join(problems)

    if entry["group"] in ("micro", "model", "bench") and not opts.no_timing:
        repeat = opts.repeat
        row["seconds"] = exe.time(*args, repeat=repeat)
        try:
            row["graph_seconds"] = exe.time(*args, repeat=repeat, graph=True)
        except Exception as e:
            row["graph_error"] = f"{type(e).__name__}: {e}"[:300]
        if entry["group"] in ("micro", "model"):
            row["profile"] = kernel_profile(exe, args)
        if fn is not None and not opts.no_xla:
            row["xla_seconds"], row["xla_call_seconds"] = xla_time(fn, args, repeat)
            if entry.get("kind") == "matmul" or entry["group"] == "model":
                row["xla_highest_seconds"] = xla_time(fn, args, repeat, "highest")[0]
        best = min(row["seconds"], row.get("graph_seconds", float("inf")))
        row["GB/s"] = entry["min_bytes"] / best / 1e9
        row["bandwidth_%peak"] = 100 * entry["min_bytes"] / best / PEAK_BANDWIDTH
        if entry.get("flops"):
            peak = PEAK_TENSOR_FLOPS.get(entry.get("tensor_dtype"), PEAK_FP32_FLOPS)
            row["TFLOP/s"] = entry["flops"] / best / 1e12
            row["flops_%peak"] = 100 * entry["flops"] / best / peak
        if "xla_seconds" in row:
            row["vs_xla"] = best / row["xla_seconds"]
    return row


def device_info(out_dir: str, copy_bytes: int) -> dict:
    from mlxc.runtime import cuda

    dev = cuda.cuda_devices()[0]
    info = {"device": str(dev), "peak_bandwidth_attr": dev.peak_bandwidth,
            "peak_fp32_attr": dev.peak_fp32_flops, "clock_khz": dev.clock_khz}
    try:  # the copy rate: a ceiling measured here rather than the datasheet's
        import jax
        import jax.numpy as jnp

        x = jnp.ones((copy_bytes // 4,), jnp.float32)
        info["xla_copy_GB/s"] = 2 * x.nbytes / xla_time(lambda x: x + 1, [x], 10)[0] / 1e9
        info["jax_devices"] = [str(d) for d in jax.devices()]
    except Exception as e:
        info["jax_error"] = f"{type(e).__name__}: {e}"[:300]
    return info


def table(rows: list[dict]) -> str:
    lines = []
    groups = ["test_cuda", "corpus", "bench", "model", "micro"]
    by = {g: [r for r in rows if r.get("group") == g] for g in groups}
    for g in ("corpus", "test_cuda"):
        rs = by[g]
        if rs:
            ok = sum(r["status"] == "ok" for r in rs)
            lines.append(f"{g}: {ok}/{len(rs)} match")
            for r in rs:
                if r["status"] != "ok":
                    lines.append(f"  {r['status']:13s} {r['name']:30s} "
                                 f"{(r.get('why') or r.get('error') or '')}"[:200])
    head = (f"{'program':26s} {'status':7s} {'err':>8s} {'ms':>9s} {'graph ms':>9s} "
            f"{'XLA ms':>8s} {'vs XLA':>7s} {'XLA hi':>8s} {'GB/s':>7s} {'%HBM':>5s} "
            f"{'TFLOP/s':>8s} {'%peak':>6s}")
    for g in ("micro", "model", "bench"):
        if not by[g]:
            continue
        lines.append(f"\n{g}:")
        lines.append(head)
        for r in by[g]:
            if "seconds" not in r:
                lines.append(f"{r['name']:26s} {r['status']:7s} {(r.get('why') or r.get('error') or '')}"[:200])
                continue
            ms = lambda k, w=9: f"{r[k] * 1e3:{w}.3f}" if k in r else f"{'-':>{w}s}"  # noqa: E731
            lines.append(
                f"{r['name']:26s} {r['status']:7s} {r.get('error', 0):8.1e} {ms('seconds')} "
                f"{ms('graph_seconds')} {ms('xla_seconds', 8)} {r.get('vs_xla', float('nan')):7.2f} "
                f"{ms('xla_highest_seconds', 8)} {r['GB/s']:7.0f} {r['bandwidth_%peak']:5.1f} "
                + (f"{r['TFLOP/s']:8.2f} {r['flops_%peak']:6.1f}" if "TFLOP/s" in r else ""))
    slow = [r for r in rows if r.get("profile")]
    if slow:
        lines.append("\nslowest kernels (ms, one launch each):")
        for r in slow:
            top = ", ".join(f"{k}{tuple(g)}x{tuple(b)} {ms:.3f}" for k, g, b, ms in r["profile"][:3])
            lines.append(f"  {r['name']:24s} {top}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=os.path.dirname(HERE))
    ap.add_argument("--out", default="gpu-out")
    ap.add_argument("-k", action="append", default=[])
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--end-time", type=float, default=float("inf"),
                    help="start no program after this Unix time (then print the table)")
    ap.add_argument("--limit-s", type=float, help="each program's time limit (default: by group)")
    ap.add_argument("--no-xla", action="store_true")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: a stand-in driver (tests the script)")
    ap.add_argument("--table", help="print the table of a results.jsonl and stop")
    opts = ap.parse_args(argv)
    if opts.table:
        with open(opts.table) as f:
            print(table([json.loads(line) for line in f if '"started"' not in line]))
        return 0
    os.makedirs(opts.out, exist_ok=True)
    if opts.dry_run:  # fake_cuda.py: beside this file in a bundle, in test/pytest in the repository
        sys.path[1:1] = [os.path.join(HERE, "..", "test", "pytest")]
        import fake_cuda

        fake_cuda.install()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    with open(os.path.join(opts.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    results = Results(os.path.join(opts.out, "results.jsonl"))
    if results.started is not None:  # the previous process ended inside this one
        _log(f"{results.started['name']}: the previous run ended while it ran")
        results.write({**results.started, "status": "crashed"})
    if "info.device" not in results.done:
        info = device_info(opts.out, copy_bytes=1 << 20 if opts.dry_run else 1 << 30)
        _log(json.dumps(info))
        results.write({"name": "device", "group": "info", "status": "info", **info})
    watchdog = Watchdog(results)
    order = ["test_cuda", "corpus", "model", "micro", "bench"]
    entries = sorted(manifest["programs"], key=lambda e: order.index(e["group"]))
    for entry in entries:
        name = entry["name"]
        if key(entry) in results.done or (opts.k and not any(k in name for k in opts.k)) or \
                (opts.group and entry["group"] not in opts.group):
            continue
        if time.time() > opts.end_time:
            _log(f"out of time: {name} and the programs after it not run")
            break
        results.write({"name": name, "group": entry["group"], "status": "started"})
        watchdog.arm(entry, opts.limit_s or LIMIT_S[entry["group"]])
        start = time.perf_counter()
        try:
            row = run_one(opts.bundle, entry, opts)
        except Exception as e:
            row = {"name": name, "group": entry["group"], "status": "error",
                   "why": f"{type(e).__name__}: {str(e)[:300]}",
                   "trace": traceback.format_exc(limit=4)[-1500:]}
        watchdog.disarm()
        row["wall_s"] = time.perf_counter() - start
        results.write(row)
        _log(f"{row['status']:13s} {entry['group']:9s} {name:30s} {row.get('wall_s', 0):6.1f}s "
             f"{row.get('why', '')[:160]}")
        if any(s in row.get("why", "") for s in SPOILED):
            _log("the CUDA context is spoiled: ending the process (rerun to resume)")
            return 3
    rows = list(results.done.values())
    text = table(rows)
    with open(os.path.join(opts.out, "table.txt"), "w") as f:
        f.write(text + "\n")
    print("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
