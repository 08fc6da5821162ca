"""What checking untrusted bytecode in a worker process costs (frontend/isolated_parse.py).

    python bench/parse_check.py [--repeat 5] [--programs mlp,transformer_block,...]

For each benchmark program's portable artifact and MLIR bytecode (and one with 16 MiB
of constants), in the same run, interleaved: the time to read it in this process
alone (what trusted bytes cost), the time to read it with the check (the worker's
parse, verification and string check, then this process's parse; the worker warm),
and a whole compile. Prints the medians in ms and the check's share of a compile.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from programs import BENCHES  # noqa: E402

import mlxc  # noqa: E402
from mlxc._mlir import ir, new_context  # noqa: E402
from mlxc.compile_context import compile_context  # noqa: E402
from mlxc.frontend import isolated_parse, source  # noqa: E402


def _sources(names):
    rng = np.random.default_rng(0)
    out = []
    for bench in BENCHES:
        if bench.name not in names:
            continue
        exported = jax.export.export(jax.jit(bench.fn))(*bench.make_inputs(rng))
        out.append((bench.name, exported))
    weights = rng.standard_normal((2048, 2048)).astype(np.float32)  # 16 MiB of constants
    out.append(("constants_16MiB", jax.export.export(jax.jit(lambda x: x @ weights))(
        np.ones((4, 2048), np.float32))))
    for name, exported in out:
        with new_context():
            buf = io.BytesIO()
            ir.Module.parse(exported.mlir_module()).operation.write_bytecode(buf)
        yield f"{name} (artifact)", exported.mlir_module_serialized
        yield f"{name} (bytecode)", buf.getvalue()


def _read_trusted(data):
    with compile_context(data):
        source._parse_bytes(data, "x", trusted=True)


def _read_checked(data):
    isolated_parse._accepted.clear()
    with compile_context(data):
        source._parse_bytes(data, "x")


def _compile(data):
    with mlxc.settings.override(cache=False):
        mlxc.compile(data)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--programs", default="mlp,transformer_block,grad_mlp,rnn_scan,tiny_add")
    args = p.parse_args()
    cases = list(_sources(set(args.programs.split(","))))
    start = time.perf_counter()
    _read_checked(cases[0][1])  # starts the worker
    print(f"starting the worker (once per process): {(time.perf_counter() - start) * 1e3:.0f} ms")
    print(f"{'program':34} {'bytes':>10} {'trusted ms':>11} {'checked ms':>11} {'extra ms':>9} "
          f"{'compile ms':>11} {'extra/compile':>14}")
    for name, data in cases:
        times = {"trusted": [], "checked": [], "compile": []}
        for _ in range(args.repeat):  # interleaved: the machine's load hits all three alike
            for kind, fn in (("trusted", _read_trusted), ("checked", _read_checked),
                             ("compile", _compile)):
                start = time.perf_counter()
                fn(data)
                times[kind].append((time.perf_counter() - start) * 1e3)
        t, c, k = (statistics.median(times[x]) for x in ("trusted", "checked", "compile"))
        print(f"{name:34} {len(data):>10} {t:>11.1f} {c:>11.1f} {c - t:>9.1f} {k:>11.0f} "
              f"{(c - t) / k:>13.1%}")


if __name__ == "__main__":
    main()
