"""Damaged and odd inputs: a CompileError naming what and where, or the right answer;
never a crash, a hang or a raw exception (tools/bitflips.py runs the big sample)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import mlxc
from mlxc.frontend import isolated_parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import bitflips  # noqa: E402

PROGRAM = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>LOC
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def sources():
    return dict(zip(("artifact", "bytecode", "text"), bitflips.program()))


@pytest.mark.parametrize("kind,seed", [("artifact", 11), ("bytecode", 12)])
def test_bit_flips_are_refused_or_compute_the_same(sources, kind, seed):
    clean = sources[kind]
    reference = mlxc.compile(clean)(*bitflips.inputs())
    original = bitflips._generic_text(clean)
    outcomes = []
    with mlxc.settings.override(parse_timeout=10):
        for bit, data in bitflips.flips(clean, 50, seed):
            outcome = bitflips.judge(data, original, [reference], interpret=False)
            assert outcome in bitflips.GOOD, f"bit {bit}: {outcome}"
            outcomes.append(outcome)
    # The sample hits both sides: damage that is refused, and damage to names or
    # locations that leaves the program (and its answer) as it was.
    assert "refused" in outcomes and "same-answer" in outcomes, outcomes


def _bytecode_of(text: str) -> bytes:
    import io

    from mlxc._mlir import ir, new_context

    with new_context():
        buf = io.BytesIO()
        ir.Module.parse(text).operation.write_bytecode(buf)
        return buf.getvalue()


def _stand_in(monkeypatch, code: str) -> None:
    """Replace the checking worker by a script that reads a request and then runs `code`."""
    isolated_parse.shutdown()
    monkeypatch.setattr(isolated_parse, "_accepted", {})
    monkeypatch.setattr(isolated_parse, "WORKER_COMMAND", [
        sys.executable, "-c", "import os, signal, sys, time; print('ready', flush=True); "
                              f"sys.stdin.readline(); {code}"])


@pytest.fixture
def fresh_worker():
    yield
    isolated_parse.shutdown()


def test_reader_crash_is_a_compile_error(monkeypatch, fresh_worker):
    # A worker that dies mid-read (as the bytecode reader does on some damaged files)
    # is restarted once, then the input is blamed.
    _stand_in(monkeypatch, "print('free(): invalid pointer', file=sys.stderr); sys.stderr.flush(); "
                           "os.kill(os.getpid(), signal.SIGSEGV)")
    program = _bytecode_of(PROGRAM.replace("LOC", ""))
    with pytest.raises(mlxc.CompileError, match=r"<bytes>: error: damaged MLIR bytecode: reading "
                       r"it crashed \(SIGSEGV\) in mlxc's checking process; it said: free\(\): "
                       r"invalid pointer"):
        mlxc.compile(program)
    monkeypatch.undo()
    isolated_parse.shutdown()
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(mlxc.compile(program)(x), x + x)


def test_reader_hang_is_a_compile_error(monkeypatch, fresh_worker):
    _stand_in(monkeypatch, "time.sleep(60)")
    with mlxc.settings.override(parse_timeout=2), pytest.raises(
            mlxc.CompileError, match=r"damaged MLIR bytecode: reading it took longer than 2 s"):
        mlxc.compile(_bytecode_of(PROGRAM.replace("LOC", "")))


def test_worker_that_cannot_start(monkeypatch, fresh_worker):
    isolated_parse.shutdown()
    monkeypatch.setattr(isolated_parse, "_accepted", {})
    monkeypatch.setattr(isolated_parse, "WORKER_COMMAND", [
        sys.executable, "-c", "import sys; sys.exit('ImportError: no module named torch_mlir')"])
    with pytest.raises(mlxc.CompileError, match=r"<bytes>: error: mlxc's checking process "
                       r"\(python -m mlxc.frontend.isolated_parse\) exited with status 1: "
                       r"ImportError: no module named torch_mlir"):
        mlxc.compile(_bytecode_of(PROGRAM.replace("LOC", "")))


def test_invalid_utf8_in_a_location_or_string(tmp_path):
    bad_loc = PROGRAM.replace("LOC", ' loc("x\\F8s")')
    with pytest.raises(mlxc.CompileError, match=r'<string>:2:49: error: string "x\\F8s" is not '
                                                r"valid UTF-8"):
        mlxc.compile(bad_loc)
    bad_attr = PROGRAM.replace("LOC", "").replace("> {", '> attributes {doc = "a\\C3("} {', 1)
    with pytest.raises(mlxc.CompileError, match=r'<string>:1:\d+: error: string "a\\C3\(" is not'):
        mlxc.compile(bad_attr)
    # The same strings in bytecode (which the text scan cannot see) are found in the module.
    with pytest.raises(mlxc.CompileError, match=r'<bytes>: error: the program holds the string '
                                                r'"x\\F8s", which is not valid UTF-8'):
        mlxc.compile(_bytecode_of(bad_loc))
    # Valid UTF-8 spelled as escapes, and an escaped backslash before hex digits, are fine.
    x = np.arange(4, dtype=np.float32)
    good = PROGRAM.replace("LOC", ' loc("x\\C3\\A9s\\\\F8")')
    np.testing.assert_array_equal(mlxc.compile(good)(x), x + x)


def test_lone_surrogate_in_text():
    text = PROGRAM.replace("LOC", ' loc("x\udcffs")')
    with pytest.raises(mlxc.CompileError, match=r"<string>:2:51: error: character '\\udcff' is a "
                                                r"lone surrogate"):
        mlxc.compile(text)


@pytest.mark.parametrize("make,message", [
    (lambda p: p.mkdir(), "a directory, not a program file"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.write_bytes(b""), "empty source"),
    (lambda p: p.write_bytes(b"func.func @main() {\xff}"), "byte 19 is not UTF-8"),
    (lambda p: p.write_bytes(b"ML\xefR"), "attempting to parse a byte at the end of the bytecode"),
])
def test_odd_files(tmp_path, make, message):
    path = tmp_path / "prog.mlir"
    make(path)
    with pytest.raises(mlxc.CompileError, match=f"{path}.*: error: .*{message}"):
        mlxc.compile(str(path))


def test_location_as_an_attribute_value():
    # Valid IR that a damaged file produced: reading such an attribute terminated the
    # process inside the bindings (mlxc._mlir replaces the location casters).
    text = ('func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = loc("w"), '
            'jax.other = [loc("f.py":1:2), loc(unknown)]}) {\n'
            '  %0 = stablehlo.add %a, %a : tensor<4xf32> loc("r"("f.py":3:4))\n'
            "  return %0 : tensor<4xf32>\n}\n")
    exe = mlxc.compile(_bytecode_of(text))
    assert str(exe.signature) == "main(arg0: f32[4]) -> (result: f32[4])"
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), x + x)


def test_undecodable_file_name(tmp_path):
    # Python keeps a file name's non-UTF-8 bytes as lone surrogates; in a location they
    # aborted the process. The error names the file with the byte escaped.
    path = os.path.join(os.fsencode(tmp_path), b"bad\xff.mlir")
    with open(path, "w") as f:
        f.write(PROGRAM.replace("stablehlo.add", "stablehlo.bogus").replace("LOC", ""))
    with pytest.raises(mlxc.CompileError, match=r"bad\\xff\.mlir:2:8: error: custom op "
                                                r"'stablehlo.bogus' is unknown"):
        mlxc.compile(os.fsdecode(path))
    x = np.arange(4, dtype=np.float32)
    exe = mlxc.compile(PROGRAM.replace("LOC", ""), name=os.fsdecode(path))
    np.testing.assert_array_equal(exe(x), x + x)


def test_constant_too_large_for_llvm():
    # LLVM builds a constant's elements in one 32-bit-sized vector: it aborted the process.
    text = ("func.func @main() -> tensor<99999999999xf32> {\n"
            "  %0 = stablehlo.constant dense<1.0> : tensor<99999999999xf32>\n"
            "  return %0 : tensor<99999999999xf32>\n}\n")
    with pytest.raises(mlxc.CompileError, match=r"<string>:2:8: error: a constant of 99999999999 "
                                                r"elements: LLVM holds at most 4294967295"):
        mlxc.compile(text)
