"""Stages run without MLIR's per-pass verifier and verify once at their end (compile
time); a pass that leaves invalid IR is still caught, named, and reproduced."""

import shlex
import sys
import types

import numpy as np
import pytest

import mlxc
from mlxc import passes as python_passes
from mlxc._mlir import ir, new_context
from mlxc.pipelines import contracts, runner
from mlxc.pipelines.model import Pass, Stage, mlir_pass

PROGRAM = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _break_ir(module) -> None:
    """Leave the entry without its terminator: a verifier error, not a pass failure."""
    for op in module.regions[0].blocks[0].operations:
        for block in op.regions[0].blocks:
            block.operations[len(block.operations) - 1].erase()


@pytest.fixture
def breaking_pass(monkeypatch):
    module = types.ModuleType("mlxc_test_break_ir")
    module.PASS = python_passes.PythonPass("mlxc-test-break-ir", "erase terminators", _break_ir)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(python_passes.REGISTRY, "mlxc-test-break-ir", module.__name__)
    return "mlxc-test-break-ir"


def _stage(*passes):
    return Stage("simplify", tuple(passes), "a test stage")


@pytest.mark.parametrize("verify_each", [False, True])
def test_invalid_ir_mid_stage_is_caught_and_reproduced(breaking_pass, tmp_path, verify_each):
    # The broken IR is followed by a pass that runs fine on it: only verification
    # (after the pass, or at the end of the stage) notices.
    stage = _stage(Pass(breaking_pass, (), (), "break"), mlir_pass("cse", "runs on anything"))
    with mlxc.settings.override(repro_dir=str(tmp_path)), new_context() as ctx, \
            ir.Location.unknown():
        module = ir.Module.parse(PROGRAM)
        with pytest.raises(mlxc.CompileError) as info:
            runner.run_stages(module, [stage], options=runner.RunOptions(verify_each=verify_each))
    err = info.value
    assert "stage 'simplify' failed" in str(err)
    assert "error: block with no terminator" in str(err), str(err)
    # The replay, verifier on, names the pass that broke the IR, not the stage.
    argv = shlex.split(err.reproducer)
    assert argv[0] == "mlxc-opt" and argv[2] == f"--pass-pipeline=builtin.module({breaking_pass})"
    saved = open(argv[1]).read()
    assert "stablehlo.add" in saved and "return" in saved, "the saved input is the pass's input"


def test_contract_error_unchanged_without_per_pass_verifier():
    with pytest.raises(mlxc.CompileError, match=r"<string>:2:8: error: mlxc cannot lower "
                                                r"'stablehlo.custom_call' yet"):
        mlxc.compile("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.custom_call @foo(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n}")


@pytest.mark.parametrize("stage, text, message", [
    ("import", "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
               "  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
     "'arith.addf' is not a StableHLO op"),
    ("bufferize", "func.func @main(%a: memref<4xf32>) {\n"
                  "  %0 = arith.constant dense<1.0> : tensor<4xf32>\n  return\n}",
     "'arith.constant' still has a value of tensor type tensor<4xf32>"),
    ("lower", "func.func @main(%a: memref<4xf32>) {\n  %c = arith.constant 1.0 : f32\n"
              "  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)\n  return\n}",
     "'linalg.fill' was not lowered to loops"),
    ("llvm", "func.func @main() {\n  return\n}", "'func.func' was not lowered to the LLVM dialect"),
    # The contracts read types once per distinct type: the offender is still the first
    # op with such a value, a block argument's included, and the stages whose contract
    # skips the results of memref and vector ops still see the others'.
    ("import", "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
               "  %0 = stablehlo.abs %a : tensor<4xf32>\n"
               "  %1 = stablehlo.add %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>\n"
               "  %2 = stablehlo.abs %1 : tensor<?xf32>\n"
               "  %3 = stablehlo.convert %2 : (tensor<?xf32>) -> tensor<4xf32>\n"
               "  return %3 : tensor<4xf32>\n}",
     "(?s)-:3:8: error: after stage 'import': op 'stablehlo.add' has a dynamic shape "
     "\\(tensor<\\?xf32>\\).*all offending ops: stablehlo.add \\(x1\\), stablehlo.abs \\(x1\\)"),
    ("lower", "func.func @main(%a: memref<4xf32>) {\n  %c = arith.constant 1.0 : f32\n"
              "  %i = arith.constant 0 : index\n"
              "  %v = vector.broadcast %c : f32 to vector<4xf32>\n"
              "  %t = tensor.empty() : tensor<4xf32>\n"
              "  %w = vector.transfer_write %v, %t[%i] : vector<4xf32>, tensor<4xf32>\n"
              "  return\n}",
     "(?s)'tensor.empty' still has a value of tensor type tensor<4xf32>; "
     "bufferization left it behind\n.*all offending ops: tensor.empty \\(x1\\), "
     "vector.transfer_write \\(x1\\)"),
    ("lower", "func.func @main(%a: memref<4xf32>) {\n"
              "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
              "  %c4 = arith.constant 4 : index\n"
              "  scf.for %i = %c0 to %c4 step %c1 {\n"
              "    scf.execute_region {\n"
              "      ^bb0:\n"
              "        cf.br ^bb1(%a : memref<4xf32>)\n"
              "      ^bb1(%m: memref<4xf32>):\n"
              "        scf.yield\n"
              "    }\n"
              "  }\n"
              "  return\n}\n"
              "func.func private @g(%t: tensor<4xf32>) {\n  return\n}",
     "-:15:1: error: after stage 'lower': 'func.func' still has a value of tensor type "
     "tensor<4xf32>"),
])
def test_contracts_name_the_first_offender(stage, text, message):
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        with pytest.raises(mlxc.CompileError, match=message):
            contracts.check(module.operation, stage)


def test_contracts_report_what_the_next_stage_needs():
    # `bufferize` records every value's element type (the `lower` stage has passes that
    # only run with bf16 values); `lower` reads fewer types, so it reports none.
    text = ("func.func @main(%a: memref<4xbf16>, %b: memref<8xi8>) {\n"
            "  %c0 = arith.constant 0 : index\n"
            "  %x = memref.load %a[%c0] : memref<4xbf16>\n"
            "  %y = arith.addf %x, %x : bf16\n"  # types of its operands: not read again
            "  %v = vector.broadcast %y : bf16 to vector<8xbf16>\n"
            "  %p = arith.constant 0 : i8\n"
            "  %w = vector.transfer_read %b[%c0], %p : memref<8xi8>, vector<8xi8>\n"
            "  return\n}")
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        contracts.check(module.operation, "bufferize")
        names, element_types = contracts.take_seen()
        assert names == {"func.func", "arith.constant", "memref.load", "arith.addf",
                         "vector.broadcast", "vector.transfer_read", "func.return"}
        assert element_types == {"bf16", "i8", "index"}
        contracts.check(module.operation, "lower")
        names, element_types = contracts.take_seen()
        assert "memref.load" in names and element_types is None


def test_compile_still_correct():
    exe = mlxc.compile(PROGRAM)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), x + x)
