"""Large results live in buffers an executable keeps (runtime/executable.py): a call
writes into one only when the caller holds no array on it any more, so results the
caller keeps never change, and a loop that drops them faults no fresh memory in."""

from __future__ import annotations

import resource
import threading

import jax
import jax.numpy as jnp
import numpy as np

import mlxc
from mlxc.runtime import executable
from helpers import export_program


def _exe():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 256)).astype(np.float32)  # 256 KiB results
    f = lambda x, s: (x * s, jnp.sum(x, axis=0) * s, (x > 0).astype(jnp.bfloat16))  # noqa: E731
    text, _, _ = export_program(f, x, np.float32(2.0))
    return mlxc.compile(text), x


def _expected(x, s):
    return x * s, x.sum(axis=0) * s, (x > 0).astype(jnp.bfloat16)


def _data(a) -> int:
    return a.__array_interface__["data"][0]


def test_results_the_caller_keeps_are_never_written_again():
    exe, x = _exe()
    first = exe(x, np.float32(2.0))
    kept = [np.array(a) for a in first]
    row = first[0][3]  # a view keeps its result's buffer too
    row_kept = row.copy()
    for s in (3.0, 4.0, 5.0):
        again = exe(x, np.float32(s))
        for got, want in zip(again, _expected(x, np.float32(s))):
            np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
        assert all(_data(a) != _data(b) for a, b in zip(again, first)
                   if a.nbytes >= executable.POOLED_RESULT_BYTES)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(row, row_kept)


def test_dropped_results_are_reused_without_page_faults():
    exe, x = _exe()
    out = exe(x, np.float32(2.0))
    address = _data(out[0])
    del out
    again = exe(x, np.float32(2.0))
    assert _data(again[0]) == address
    del again
    for _ in range(3):
        exe(x, np.float32(2.0))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        exe(x, np.float32(2.0))
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    # 20 fresh 256 KiB results would fault in 64 pages each
    assert faults < 64, faults


def test_threads_calling_one_executable_get_their_own_results():
    exe, x = _exe()
    errors = []

    def work(s):
        try:
            for _ in range(30):
                got = exe(x, np.float32(s))
                np.testing.assert_array_equal(got[0], x * np.float32(s))
                np.testing.assert_array_equal(got[1], x.sum(axis=0) * np.float32(s))
        except AssertionError as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (2.0, 3.0, 7.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_a_result_larger_than_malloc_keeps_is_not_faulted_in_each_call():
    """A 64 MiB result: glibc maps memory that large afresh for every allocation (it
    keeps at most 32 MiB blocks), so without kept buffers each call faulted in all of
    its 16384 pages."""
    x = np.ones((4096, 4096), np.float32)
    text, _, _ = export_program(lambda x: x * 2.0, x)
    exe = mlxc.compile(text)
    for _ in range(2):
        exe(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        out = exe(x)
        del out
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 1000, faults
