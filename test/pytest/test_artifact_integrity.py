"""Damaged, edited and overwritten artifacts: a clear ArtifactError before any code runs,
and a loaded artifact keeps working whatever happens to its file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlxc
from mlxc.runtime import artifact

TWICE = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.add %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
X = np.arange(4, dtype=np.float32)
Y = np.full(4, 0.5, np.float32)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("artifact") / "twice.so"
    mlxc.compile(TWICE).save(path)
    return path.read_bytes()


def test_truncated_artifact_is_refused_before_loading(saved, tmp_path):
    body = len(saved) - artifact.TRAILER_BYTES
    cuts = sorted(set(range(0, body, body // 24)) | {body - 1, 64, 1})
    for cut in cuts:
        path = tmp_path / f"cut{cut}.so"
        path.write_bytes(saved[:cut])
        with pytest.raises(mlxc.ArtifactError, match=r"not an mlxc artifact|truncated or damaged"):
            mlxc.load(path)
    # Cut inside the checksum: the library itself is whole, and runs.
    path = tmp_path / "trailer.so"
    path.write_bytes(saved[:body + 10])
    np.testing.assert_array_equal(mlxc.load(path)(X, Y), 2 * (X + Y))


def _edited(saved: bytes, edit) -> bytes:
    """`saved` with its manifest's JSON replaced by edit(manifest), padded to its length."""
    start = saved.index(b'{"abi": ')
    end = saved.index(b"\0", start)
    manifest = json.loads(saved[start:end])
    edit(manifest)
    new = json.dumps(manifest, sort_keys=True).encode()
    assert len(new) <= end - start, "the edit must not lengthen the manifest"
    return saved[:start] + new + b" " * (end - start - len(new)) + saved[end:]


EDITS = {
    "shape": lambda m: m["signature"]["inputs"][0].update(shape=[3]),
    "dtype": lambda m: m["signature"]["outputs"][0].update(element_type="i8"),
    "count": lambda m: m["signature"]["inputs"].pop(),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edited_manifest_is_refused(saved, tmp_path, edit):
    data = _edited(saved, EDITS[edit])
    path = tmp_path / "edited.so"
    path.write_bytes(data)
    with pytest.raises(mlxc.ArtifactError, match="do not match the checksum mlxc wrote"):
        mlxc.load(path)
    # Without the checksum (as if linked by hand): the code's own signature refuses it.
    path.write_bytes(data[:-artifact.TRAILER_BYTES])
    with pytest.raises(mlxc.ArtifactError, match=r"the manifest describes main\(.*\), which is "
                                                 "not the signature the code was compiled for"):
        mlxc.load(path)


def test_save_over_a_loaded_artifact(tmp_path):
    first, second = tmp_path / "first.so", tmp_path / "second.so"
    mlxc.compile(TWICE).save(first)
    mlxc.compile(TWICE.replace("%0, %0", "%0, %a")).save(second)
    loaded = mlxc.load(first)
    # A loaded artifact saved over another loaded one (a cache hit saves this way).
    mlxc.load(second).save(first)
    np.testing.assert_array_equal(loaded(X, Y), 2 * (X + Y))
    np.testing.assert_array_equal(mlxc.load(first)(X, Y), X + Y + X)
    # A saved file over one that another process has loaded and keeps calling.
    mlxc.compile(TWICE).save(first)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, numpy as np, mlxc
        exe = mlxc.load({str(first)!r})
        x, y = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
        print(exe(x, y).tolist(), flush=True)
        sys.stdin.readline()
        print(exe(x, y).tolist(), flush=True)
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == str((2 * (X + Y)).tolist())
    mlxc.load(second).save(first)
    mlxc.compile(TWICE.replace("%0, %0", "%0, %b")).save(first)
    out, _ = child.communicate("go\n", timeout=60)
    assert child.returncode == 0 and out.strip() == str((2 * (X + Y)).tolist())


def test_artifact_path_that_is_not_a_file(tmp_path):
    with pytest.raises(mlxc.ArtifactError, match="a directory, not an artifact"):
        mlxc.load(tmp_path)
    fifo = tmp_path / "pipe.so"
    import os

    os.mkfifo(fifo)
    with pytest.raises(mlxc.ArtifactError, match="not a regular file, not an artifact"):
        mlxc.load(fifo)
