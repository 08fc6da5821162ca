"""The persistent compile cache: hits, keys, MLXC_CACHE / MLXC_CACHE_DIR, damaged
entries rebuilt, and two processes compiling the same program at once."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import mlxc
from mlxc import cache
from helpers import assert_matches, export_program

import jax.numpy as jnp


def _program():
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 4)).astype(np.float32)
    text, _, ref = export_program(lambda x, w: jnp.tanh(x @ w).sum(0), x, w)
    return text, (x, w), ref


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("MLXC_CACHE", "1")
    monkeypatch.setenv("MLXC_CACHE_DIR", str(folder))
    yield folder
    # A write still running would end in the next test: its warning, or cache._warned
    # set there, then hides that test's own (test_unwritable_cache_warns_and_compiles
    # failed so after the damaged-entry cases).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cache.wait()


def _entries(folder):
    return sorted(glob.glob(os.path.join(folder, "v1", "*", "*.json")))


def _is_hit(exe) -> bool:
    # A hit is the artifact loaded from disk; a compile returns the JIT's executable.
    return exe.manifest is not None


def test_second_compile_is_a_hit(cache_dir):
    text, args, ref = _program()
    first = mlxc.compile(text)
    assert not _is_hit(first)
    cache.wait()  # the entry is written in the background
    assert len(_entries(cache_dir)) == 1
    start = time.perf_counter()
    second = mlxc.compile(text)
    warm_ms = (time.perf_counter() - start) * 1e3
    assert _is_hit(second), f"no hit ({warm_ms:.1f} ms)"
    assert_matches(second(*args), ref, 1e-5)
    np.testing.assert_array_equal(second(*args), first(*args))
    # The same program from a file is the same bytes: the same entry.
    path = cache_dir.parent / "p.mlir"
    path.write_text(text)
    assert _is_hit(mlxc.compile(str(path)))
    assert len(_entries(cache_dir)) == 1


def test_compile_again_while_the_entry_is_written_does_not_recompile(cache_dir, monkeypatch):
    import mlxc.compiler

    runs = []
    real_run = mlxc.compiler._run
    monkeypatch.setattr(mlxc.compiler, "_run", lambda *a: runs.append(a) or real_run(*a))
    text, args, ref = _program()
    first = mlxc.compile(text)
    second = mlxc.compile(text)  # the entry may still be being linked in the background
    assert len(runs) == 1
    assert second is first or _is_hit(second)
    assert_matches(second(*args), ref, 1e-5)
    cache.wait()
    assert _is_hit(mlxc.compile(text)) and len(runs) == 1


def test_key_covers_source_options_entry_and_settings(cache_dir):
    text, _, _ = _program()
    base = cache.key(text, "cpu", "main", None, {})
    assert base == cache.key(text, "cpu", "main", None, {})
    others = [cache.key(text + " ", "cpu", "main", None, {}),
              cache.key(text, "cpu", "other", None, {}),
              cache.key(text, "cpu", "main", "linalg", {}),
              cache.key(text, "cpu", "main", None, {"opt_level": 0})]
    with mlxc.settings.override(opt_level=3 - mlxc.settings.get("opt_level")):  # not the default
        others.append(cache.key(text, "cpu", "main", None, {}))
    assert len(set(others + [base])) == len(others) + 1
    with mlxc.settings.override(dump_dir=str(cache_dir / "dump")):
        assert cache.key(text, "cpu", "main", None, {}) is None  # dumping means compiling
    assert cache.key(text, "cpu", "main", None, {"target_triple": "aarch64-linux-gnu"}) is None


def test_key_covers_the_compiler_and_the_cpu(cache_dir, monkeypatch):
    from mlxc.runtime import artifact

    text, _, _ = _program()
    base = cache.key(text, "cpu", "main", None, {})
    monkeypatch.setattr(cache, "_fingerprint", "an edited mlxc")
    edited = cache.key(text, "cpu", "main", None, {})
    monkeypatch.setattr(artifact, "_cpu_info", ("another CPU", frozenset({"sse4_2"})))
    other_cpu = cache.key(text, "cpu", "main", None, {})
    assert len({base, edited, other_cpu}) == 3


def test_cache_off_and_moved(tmp_path, monkeypatch):
    text, args, ref = _program()
    monkeypatch.setenv("MLXC_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("MLXC_CACHE", "0")
    assert not _is_hit(mlxc.compile(text)) and not _is_hit(mlxc.compile(text))
    assert not (tmp_path / "off").exists()
    monkeypatch.setenv("MLXC_CACHE", "1")
    monkeypatch.setenv("MLXC_CACHE_DIR", str(tmp_path / "moved"))
    mlxc.compile(text)
    cache.wait()
    assert len(_entries(tmp_path / "moved")) == 1
    with mlxc.settings.override(cache=False):
        assert not _is_hit(mlxc.compile(text))
    assert_matches(mlxc.compile(text)(*args), ref, 1e-5)


def _library(folder):
    (meta,) = _entries(folder)
    with open(meta) as f:
        return os.path.join(os.path.dirname(meta), json.load(f)["library"]), meta


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty_meta", "garbage_meta", "missing_library",
                                    "fifo_meta", "fifo_library", "device_library", "folder_meta"])
def test_damaged_entry_is_rebuilt_not_loaded(cache_dir, damage):
    text, args, ref = _program()
    mlxc.compile(text)
    cache.wait()
    lib, meta = _library(cache_dir)
    data = open(lib, "rb").read()
    if damage == "truncate":
        open(lib, "wb").write(data[: len(data) // 2])
    elif damage == "flip":
        i = len(data) // 2
        open(lib, "wb").write(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
    elif damage == "empty_meta":
        open(meta, "w").close()
    elif damage == "garbage_meta":
        open(meta, "w").write('{"library": "../../../etc/passwd", "size": 1}')
    elif damage in ("fifo_meta", "fifo_library"):  # opening one for reading would block
        target = meta if damage == "fifo_meta" else lib
        os.unlink(target)
        os.mkfifo(target)
    elif damage == "device_library":  # reading would never end
        os.unlink(lib)
        os.symlink("/dev/zero", lib)
    elif damage == "folder_meta":
        os.unlink(meta)
        os.mkdir(meta)
    else:
        os.unlink(lib)
    rebuilt = mlxc.compile(text)
    assert not _is_hit(rebuilt)
    assert_matches(rebuilt(*args), ref, 1e-5)
    if damage == "folder_meta":  # the entry cannot be written over a folder (a warning)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cache.wait()
        assert not _is_hit(mlxc.compile(text))
        return
    cache.wait()
    again = mlxc.compile(text)
    assert _is_hit(again)
    assert_matches(again(*args), ref, 1e-5)


def test_unwritable_cache_warns_and_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MLXC_CACHE", "1")
    monkeypatch.setenv("MLXC_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(cache, "_warned", False)
    text, args, ref = _program()
    with pytest.warns(RuntimeWarning, match="not caching compiled programs"):
        exe = mlxc.compile(text)
        cache.wait()
    assert_matches(exe(*args), ref, 1e-5)


def test_dynamic_programs_are_not_cached(cache_dir):
    src = ("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
           "  %y = stablehlo.multiply %x, %x : tensor<?xf32>\n  return %y : tensor<?xf32>\n}\n")
    exe = mlxc.compile(src)
    np.testing.assert_array_equal(exe(np.full(3, 2, np.float32)), np.full(3, 4, np.float32))
    cache.wait()
    assert _entries(cache_dir) == []


_RACER = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import mlxc, mlxc.cache
    text = open(sys.argv[1]).read()
    while not os.path.exists(sys.argv[2]):  # start together
        time.sleep(0.001)
    exe = mlxc.compile(text)
    x = np.arange(128, dtype=np.float32).reshape(8, 16) / 100
    w = np.ones((16, 4), np.float32)
    np.save(sys.argv[3], exe(x, w))
    print(mlxc.cache.key(text, "cpu", "main", None, {}))
""")


def test_two_processes_compiling_at_once_leave_a_valid_entry(cache_dir, tmp_path):
    text, _, _ = _program()
    (tmp_path / "p.mlir").write_text(text)
    (tmp_path / "racer.py").write_text(_RACER)
    env = dict(os.environ, MLXC_CACHE="1", MLXC_CACHE_DIR=str(cache_dir))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "racer.py"), str(tmp_path / "p.mlir"),
                               str(go), str(tmp_path / f"out{i}.npy")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    time.sleep(0.5)
    go.write_text("")
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
    x = np.arange(128, dtype=np.float32).reshape(8, 16) / 100
    expected = np.tanh(x @ np.ones((16, 4), np.float32)).sum(0)
    for i in range(2):
        np.testing.assert_allclose(np.load(tmp_path / f"out{i}.npy"), expected, rtol=1e-5)
    assert len(_entries(cache_dir)) == 1
    assert not glob.glob(os.path.join(cache_dir, "v1", "*", ".tmp-*"))  # no temporaries left
    (key,) = {out.strip() for out, _ in results}  # both compiled the same program
    # Looked up by the racers' key: the test process's own key would differ if an mlxc
    # file changed meanwhile (the key covers mlxc's files).
    exe = cache.lookup(key)
    assert exe is not None and _is_hit(exe)
    np.testing.assert_allclose(exe(x, np.ones((16, 4), np.float32)), expected, rtol=1e-5)


_FRESH = textwrap.dedent("""
    import sys
    import numpy as np
    import mlxc
    from mlxc import cache
    exe = mlxc.compile(sys.argv[1])
    x = np.arange(128, dtype=np.float32).reshape(8, 16) / 100
    y = exe(x, np.ones((16, 4), np.float32))
    print("hit" if exe.manifest is not None else "miss", "torch_mlir" in sys.modules,
          cache._fingerprint, float(y.sum()))
""")


def test_hit_in_a_fresh_process_imports_no_compiler(cache_dir, tmp_path):
    text, _, _ = _program()
    (tmp_path / "p.mlir").write_text(text)
    (tmp_path / "fresh.py").write_text(_FRESH)
    env = dict(os.environ, MLXC_CACHE="1", MLXC_CACHE_DIR=str(cache_dir))

    def run():
        proc = subprocess.run([sys.executable, str(tmp_path / "fresh.py"), str(tmp_path / "p.mlir")],
                              env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    expected = float(np.tanh((np.arange(128, dtype=np.float32).reshape(8, 16) / 100)
                             @ np.ones((16, 4), np.float32)).sum())
    for _ in range(3):  # a file of mlxc edited between the two runs changes the key: again
        first, second = run(), run()
        if first[2] == second[2]:
            break
    assert first[:2] == ["miss", "True"]
    assert second[:2] == ["hit", "False"], second
    assert abs(float(second[3]) - expected) < 1e-3 * abs(expected)
