"""Flip single bits of a small program's portable artifact, MLIR bytecode and text, and
compile each damaged copy: every outcome must be a CompileError, or a program that runs
and computes what the (possibly changed) program means.

    python tools/bitflips.py [--flips 600] [--seed 0] [--kinds artifact,bytecode,text]

Each copy is compiled in a worker process, so that a crash or a hang (the bugs this
looks for) is counted instead of ending the run. A copy that compiles is run on fixed
inputs: when it still prints as the original program its results must equal the
original's; otherwise they are compared with the StableHLO interpreter's for the
changed program. Prints the outcomes per kind, every bad one, and exits 1 if any.
test/pytest/test_damaged_inputs.py runs a small sample of the same in-process.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections import Counter

import numpy as np

GOOD = ("refused", "same-answer", "interpreter-agrees", "unjudged", "interpreter-crashed")
_INTERPRETING, _INTERPRETED = "bitflips: interpreting", "bitflips: interpreted"


def program():
    """(artifact bytes, bytecode bytes, text) of a small JAX program."""
    import jax
    import jax.numpy as jnp

    from mlxc._mlir import ir, new_context

    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0) * 2.0

    exported = jax.export.export(jax.jit(f))(*inputs())
    text = exported.mlir_module()
    with new_context():
        buf = io.BytesIO()
        ir.Module.parse(text).operation.write_bytecode(buf)
    return exported.mlir_module_serialized, buf.getvalue(), text.encode()


def inputs():
    return [np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
            np.arange(12, dtype=np.float32).reshape(3, 4) / 11 - 0.5]


def flips(data: bytes, count: int, seed: int) -> list[tuple[int, bytes]]:
    """`count` copies of `data`, each with one bit flipped: (bit index, bytes)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        bit = rng.randrange(len(data) * 8)
        damaged = bytearray(data)
        damaged[bit // 8] ^= 1 << (bit % 8)
        out.append((bit, bytes(damaged)))
    return out


def _generic_text(data: bytes):
    """The program as mlxc reads it, in generic form without locations (None if refused)."""
    from mlxc.compile_context import compile_context
    from mlxc.frontend import source

    with compile_context(data):
        return source.load(data).module.operation.get_asm(print_generic_op_form=True)


def judge(data: bytes, original_text: str, reference, interpret: bool) -> str:
    """What compiling and running the damaged `data` gives (an entry of GOOD, or a
    description of what went wrong)."""
    import mlxc

    try:
        exe = mlxc.compile(data)
    except mlxc.CompileError:
        return "refused"
    except Exception as e:  # noqa: BLE001 - exactly what this looks for
        return f"raw {type(e).__name__}: {str(e)[:200]}"
    args = inputs()
    if [(t.shape, t.dtype) for t in exe.signature.inputs] != [(a.shape, a.dtype) for a in args]:
        return "unjudged"  # the flip changed the signature: these inputs no longer fit
    outputs = exe(*args)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    if _generic_text(data) == original_text:
        same = len(outputs) == len(reference) and all(
            np.array_equal(o, r, equal_nan=True) for o, r in zip(outputs, reference))
        return "same-answer" if same else "WRONG: the same program computes another answer"
    if not interpret:
        return "unjudged"
    from mlxc.conformance import oracle

    print(_INTERPRETING, file=sys.stderr, flush=True)  # a crash from here on is not mlxc's
    try:
        expected = oracle.interpret(_generic_text(data), args)
    except Exception:  # noqa: BLE001 - the interpreter cannot run every program
        return "unjudged"
    print(_INTERPRETED, file=sys.stderr, flush=True)
    if len(expected) != len(outputs) or not all(
            o.shape == e.shape and np.allclose(o, e, rtol=1e-5, atol=1e-6, equal_nan=True)
            for o, e in zip(outputs, expected)):
        return "WRONG: the interpreter computes another answer"
    return "interpreter-agrees"


# --- a worker process per run of cases, restarted after a crash or a hang ------------

def _worker() -> None:
    import faulthandler

    import mlxc

    faulthandler.enable()  # a crash's Python stack goes to the log the parent reads

    original = {}
    reference = {}
    for line in sys.stdin:
        request = json.loads(line)
        kind = request["kind"]
        with open(request["path"], "rb") as f:
            data = f.read()
        if kind not in original:
            with open(request["original"], "rb") as f:
                clean = f.read()
            original[kind] = _generic_text(clean)
            out = mlxc.compile(clean)(*inputs())
            reference[kind] = list(out) if isinstance(out, tuple) else [out]
        print(json.dumps(judge(data, original[kind], reference[kind], True)), flush=True)


def run(cases: list[tuple[str, str, str]], timeout: float) -> list[str]:
    """Outcome of each (kind, damaged file, original file), one worker for many cases."""
    outcomes: list[str] = []
    i = 0
    while i < len(cases):
        log = tempfile.TemporaryFile("w+", errors="replace")  # a pipe could fill and block it
        proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, text=True, errors="replace")
        while i < len(cases):
            kind, path, original = cases[i]
            proc.stdin.write(json.dumps({"kind": kind, "path": path, "original": original}) + "\n")
            proc.stdin.flush()
            reply: list[str] = []
            reader = threading.Thread(target=lambda: reply.append(proc.stdout.readline()))
            reader.start()
            reader.join(timeout)
            i += 1
            if reader.is_alive():
                proc.kill()
                reader.join()
                outcomes.append(f"HANG (more than {timeout:g} s)")
                break
            if not reply[0]:
                proc.wait()
                log.seek(0)
                err = log.read().strip().splitlines()
                stages = [line for line in err if line in (_INTERPRETING, _INTERPRETED)]
                if stages and stages[-1] == _INTERPRETING:  # the StableHLO interpreter's crash
                    outcomes.append("interpreter-crashed")
                else:
                    # The message, then the innermost Python frame faulthandler printed.
                    frames = [line.strip() for line in err if line.strip().startswith("File ")]
                    noise = ("Fatal", "Thread", "  ", "Current", "Extension", "bitflips:")
                    message = next((line for line in err if not line.startswith(noise)), "")
                    outcomes.append(f"CRASH (status {proc.returncode}): {message} "
                                    f"{frames[0] if frames else ''}")
                break
            outcomes.append(json.loads(reply[0]))
        else:
            proc.stdin.close()
            proc.wait()
        log.close()
    return outcomes


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flips", type=int, default=600, help="damaged copies per kind")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kinds", default="artifact,bytecode,text")
    p.add_argument("--timeout", type=float, default=180, help="seconds per case before a hang")
    p.add_argument("--keep", metavar="DIR", help="write the damaged copies into DIR and keep them "
                   "(compile one with mlxc to reproduce a bad outcome)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker()
        return 0
    sources = dict(zip(("artifact", "bytecode", "text"), program()))
    bad = 0
    with tempfile.TemporaryDirectory(prefix="mlxc-bitflips-") as tmp:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            tmp = args.keep
        for kind in args.kinds.split(","):
            original = os.path.join(tmp, f"{kind}.orig")
            with open(original, "wb") as f:
                f.write(sources[kind])
            cases, bits = [], []
            for n, (bit, data) in enumerate(flips(sources[kind], args.flips, args.seed)):
                path = os.path.join(tmp, f"{kind}-{n}-bit{bit}")
                with open(path, "wb") as f:
                    f.write(data)
                cases.append((kind, path, original))
                bits.append(bit)
            outcomes = run(cases, args.timeout)
            counts = Counter(o if o in GOOD else o.split(":")[0] for o in outcomes)
            print(f"{kind} ({len(sources[kind])} bytes, {len(outcomes)} flips): "
                  + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
            for (_, path, _), bit, outcome in zip(cases, bits, outcomes):
                if outcome not in GOOD:
                    bad += 1
                    print(f"  bit {bit}: {outcome}" + (f" ({path})" if args.keep else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
