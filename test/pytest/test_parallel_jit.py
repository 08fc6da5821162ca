"""LLVM code generation on two threads (targets/cpu/parallel_jit.py): a large program's
kernels compiled as several modules on two threads give the results of the program
compiled whole, in the JIT and in a saved artifact; failures are CompileErrors."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import mlxc
from mlxc import cache, settings
from mlxc._mlir import ir, new_context
from mlxc.targets.cpu import parallel_jit
from corpus import PROGRAMS
from helpers import as_tuple, assert_matches, export_program

BY_NAME = {p.name: p for p in PROGRAMS}


@pytest.fixture(autouse=True)
def _idle_machine(monkeypatch):
    # The split is skipped while no core is free.
    monkeypatch.setattr(parallel_jit, "second_core_free", lambda: True)


def _bench_program(name):
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    from programs import BENCHES
    return next(b for b in BENCHES if b.name == name)


def _compile(text, threads: int, **more):
    with settings.override(compile_threads=threads, cache=False, **more):
        return mlxc.compile(text)


@pytest.mark.parametrize("source", ["corpus", "bench"])
def test_split_program_matches_the_whole_one_and_jax(source, tmp_path):
    # The corpus's transformer block (4 kernels in module B) and the bench's (larger,
    # with OpenMP regions in the kernels; its products generated, as calls to the
    # runtime's kernel they leave too little code to split).
    prog = BY_NAME["transformer_block"] if source == "corpus" else _bench_program("transformer_block")
    make = prog.make_inputs
    args = make(np.random.default_rng(1))
    text, _, ref = export_program(prog.fn, *args)
    more = {} if source == "corpus" else {"library_calls": False}
    split = _compile(text, 2, **more)
    whole = _compile(text, 1, **more)
    assert isinstance(split._keepalive, parallel_jit.SplitProgram), "expected a split program"
    assert len(split._keepalive.kernels) >= 2
    assert not isinstance(whole._keepalive, parallel_jit.SplitProgram)
    out = split(*args)
    assert_matches(out, ref, 1e-4)
    for a, b in zip(as_tuple(out), as_tuple(whole(*args))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # Several calls, from a fresh set of inputs: the table of kernels stays filled.
    args2 = make(np.random.default_rng(2))
    _, _, ref2 = export_program(prog.fn, *args2)
    assert_matches(split(*args2), ref2, 1e-4)

    # The artifact links both objects and fills the table when loaded.
    path = tmp_path / "split.so"
    split.save(path)
    loaded = mlxc.load(path)
    for a, b in zip(as_tuple(loaded(*args)), as_tuple(out)):
        np.testing.assert_array_equal(a, b)


def test_compile_cache_keeps_split_programs(tmp_path):
    prog = BY_NAME["transformer_block"]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, ref = export_program(prog.fn, *args)
    with settings.override(compile_threads=2, cache=True, cache_dir=str(tmp_path)):
        first = mlxc.compile(text)
        assert isinstance(first._keepalive, parallel_jit.SplitProgram)
        cache.wait()  # the artifact is linked in the background
        again = mlxc.compile(text)  # from the cache: the linked artifact
        assert not isinstance(again._keepalive, parallel_jit.SplitProgram)
        for a, b in zip(as_tuple(again(*args)), as_tuple(first(*args))):
            np.testing.assert_array_equal(a, b)
    assert_matches(again(*args), ref, 1e-4)


def test_small_programs_stay_one_module():
    prog = BY_NAME["mlp"]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, ref = export_program(prog.fn, *args)
    exe = _compile(text, 2)
    assert not isinstance(exe._keepalive, parallel_jit.SplitProgram)
    assert_matches(exe(*args), ref, 1e-4)
    assert "mlxc.kernel" not in mlxc.lower(text)


def test_chunks_balance_by_ops():
    weights = {"k0": 100, "k1": 90, "k2": 40, "k3": 30, "k4": 10}
    groups = parallel_jit.chunks(weights, 3)
    assert sorted(k for g in groups for k in g) == sorted(weights)
    assert all(g == sorted(g) for g in groups)
    sizes = [sum(weights[k] for k in g) for g in groups]
    assert sizes == sorted(sizes, reverse=True) == [100, 90, 80]
    assert parallel_jit.chunks({"k0": 5}, 3) == [["k0"]]


@pytest.mark.parametrize("chunks,late", [(1, "worker"), (5, "worker"), (3, "main")])
def test_whichever_thread_compiles_a_chunk_fills_its_slots(chunks, late, monkeypatch):
    """The chunks go to whichever thread is free: with the worker held back, this
    thread compiles all of them after module A; with this thread held back (a slow
    module A), the worker does. Either way every kernel's slot of the table holds its
    own address, and the results are those of the program compiled whole."""
    monkeypatch.setattr(parallel_jit, "CHUNKS", chunks)
    if late == "worker":
        original = parallel_jit._worker_chunks

        def late_worker(*args):
            time.sleep(1.0)
            return original(*args)
        monkeypatch.setattr(parallel_jit, "_worker_chunks", late_worker)
    else:
        original = parallel_jit._compile_chunks
        main = threading.get_ident()

        def late_main(*args):
            if threading.get_ident() == main:
                time.sleep(1.0)
            return original(*args)
        monkeypatch.setattr(parallel_jit, "_compile_chunks", late_main)
    prog = BY_NAME["transformer_block"]
    args = prog.make_inputs(np.random.default_rng(3))
    text, _, ref = export_program(prog.fn, *args)
    split = _compile(text, 2)
    assert isinstance(split._keepalive, parallel_jit.SplitProgram)
    assert len(split._keepalive.engines) == 1 + min(chunks, len(split._keepalive.kernels))
    whole = _compile(text, 1)
    for a, b in zip(as_tuple(split(*args)), as_tuple(whole(*args))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert_matches(split(*args), ref, 1e-4)


def test_engine_failure_is_a_compile_error():
    # A module the LLVM translation rejects (a func.func, not the LLVM dialect): the C
    # API returns a null engine.
    ctx = new_context()
    with ctx:
        module = ir.Module.parse("func.func @f() {\n  return\n}")
    with pytest.raises(mlxc.CompileError, match="LLVM code generation failed"):
        parallel_jit.Engine(module, 2, [])


def _compile_in_child(text, args, expected, queue):
    try:
        out = _compile(text, 2)(*args)
        queue.put(all(np.array_equal(a, b) for a, b in zip(as_tuple(out), expected)))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        queue.put(repr(e))


def test_forked_child_compiles_split_programs():
    # The worker thread does not survive fork(): the child must start its own rather
    # than wait for the parent's.
    import multiprocessing

    prog = BY_NAME["transformer_block"]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, _ = export_program(prog.fn, *args)
    exe = _compile(text, 2)
    assert isinstance(exe._keepalive, parallel_jit.SplitProgram)
    expected = as_tuple(exe(*args))
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_compile_in_child, args=(text, args, expected, queue))
    child.start()
    try:
        assert queue.get(timeout=120) is True
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()


def test_busy_machine_compiles_one_module(monkeypatch):
    monkeypatch.setattr(parallel_jit, "second_core_free", lambda: False)
    prog = BY_NAME["transformer_block"]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, ref = export_program(prog.fn, *args)
    exe = _compile(text, 2)
    assert not isinstance(exe._keepalive, parallel_jit.SplitProgram)
    assert_matches(exe(*args), ref, 1e-4)
    # Nor is it outlined: kernels kept in one module only cost compile time. The only
    # functions besides the entry are kernels that several calls share (dedup_kernels).
    with settings.override(compile_threads=2):
        kernels = [line for line in mlxc.lower(text).splitlines() if "mlxc.kernel" in line]
    assert all("mlxc.shared_kernel" in line for line in kernels), kernels


def test_failure_on_the_worker_is_a_compile_error(monkeypatch):
    # Module B's parse or code generation failing on the worker thread reaches the
    # caller as the CompileError the one-thread path raises, and the next compile works.
    def no_context():
        raise RuntimeError("worker context unavailable")

    real = parallel_jit._worker_context
    monkeypatch.setattr(parallel_jit, "_worker_context", no_context)
    prog = BY_NAME["transformer_block"]
    args = prog.make_inputs(np.random.default_rng(0))
    text, _, ref = export_program(prog.fn, *args)
    with pytest.raises(mlxc.CompileError, match="LLVM code generation failed") as info:
        _compile(text, 2)
    assert "worker context unavailable" in str(info.value)
    monkeypatch.setattr(parallel_jit, "_worker_context", real)
    exe = _compile(text, 2)
    assert isinstance(exe._keepalive, parallel_jit.SplitProgram)
    assert_matches(exe(*args), ref, 1e-4)
