"""Artifacts link mlxc's runtime compiled once for every process that uses the compile
cache (link._kept_runtime_objects): kept in the cache folder, reused by the next
process, rebuilt when incomplete, and never written when the cache is off."""

import os
import subprocess
import sys

import numpy as np
import pytest

import mlxc
from mlxc import settings
from mlxc.targets.cpu import link

PROGRAM = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<4xf32>
  %1 = stablehlo.add %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}"""

x = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
y = np.array([2.0, 0.5, -1.0, 8.0], np.float32)

SAVE_IN_A_NEW_PROCESS = """
import sys
import numpy as np
import mlxc
exe = mlxc.compile(sys.argv[1])
exe.save(sys.argv[2])
"""


@pytest.fixture(autouse=True)
def _fresh_process_memo(monkeypatch):
    monkeypatch.setattr(link, "_objects", {})


def _kept(cache_dir):
    root = os.path.join(cache_dir, "runtime")
    return [os.path.join(root, d) for d in sorted(os.listdir(root))] if os.path.isdir(root) else []


def _check_artifact(path):
    np.testing.assert_array_equal(mlxc.load(path)(x, y), x * y + x)


def test_runtime_kept_in_the_cache_and_reused_by_the_next_process(tmp_path):
    cache_dir = str(tmp_path / "cache")
    with settings.override(cache=True, cache_dir=cache_dir):
        exe = mlxc.compile(PROGRAM)
        exe.save(str(tmp_path / "a.so"))
    _check_artifact(str(tmp_path / "a.so"))
    [folder] = _kept(cache_dir)
    objects = sorted(f for f in os.listdir(folder) if f.endswith(".o"))
    sources = sorted(f[:-2] + ".o" for f in os.listdir(link.runtime_source_dir()) if f.endswith(".c"))
    assert objects == sources and os.path.exists(os.path.join(folder, "complete"))
    stamps = {f: os.stat(os.path.join(folder, f)).st_mtime_ns for f in objects}

    env = {**os.environ, "MLXC_CACHE": "1", "MLXC_CACHE_DIR": cache_dir}
    subprocess.run([sys.executable, "-c", SAVE_IN_A_NEW_PROCESS, PROGRAM, str(tmp_path / "b.so")],
                   check=True, env=env, capture_output=True, text=True)
    _check_artifact(str(tmp_path / "b.so"))
    assert _kept(cache_dir) == [folder]
    assert {f: os.stat(os.path.join(folder, f)).st_mtime_ns for f in objects} == stamps


def test_incomplete_kept_runtime_is_not_used(tmp_path):
    cache_dir = str(tmp_path / "cache")
    with settings.override(cache=True, cache_dir=cache_dir):
        exe = mlxc.compile(PROGRAM)
        exe.save(str(tmp_path / "a.so"))
        [folder] = _kept(cache_dir)
        victim = sorted(f for f in os.listdir(folder) if f.endswith(".o"))[0]
        os.unlink(os.path.join(folder, victim))
        link._objects.clear()
        exe.save(str(tmp_path / "b.so"))  # compiles its own copy of the runtime
    _check_artifact(str(tmp_path / "b.so"))


def test_no_runtime_kept_without_the_cache(tmp_path):
    cache_dir = str(tmp_path / "cache")
    with settings.override(cache=False, cache_dir=cache_dir):
        exe = mlxc.compile(PROGRAM)
        exe.save(str(tmp_path / "a.so"))
    _check_artifact(str(tmp_path / "a.so"))
    assert _kept(cache_dir) == []
