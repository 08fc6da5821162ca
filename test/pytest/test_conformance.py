"""The conformance runner, and StableHLO's suites run through it.

The suites live in ../shared/conformance (not in this repository); the suite test
skips when they are absent. Cases that mlxc does not pass yet are listed, with their
outcome, in conformance_known_failures.txt: any other failure fails the test, and so
does a listed case that passes (the list only shrinks).
"""

import os
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import mlxc
from mlxc.conformance import checks, harness, runner, suites
from mlxc.conformance.execute import CRASH, FAIL, PASS, TIMEOUT, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "..", "shared", "conformance", "stablehlo")
KNOWN = os.path.join(HERE, "conformance_known_failures.txt")


# --- checks ----------------------------------------------------------------------

def test_eq_compares_bits_but_nans_match():
    c = checks.Check("eq")
    a = np.array([1.0, np.nan, 0.0], np.float32)
    assert checks.compare(c, a, a.copy()) is None
    assert checks.compare(c, a, np.array([1.0, -np.nan, 0.0], np.float32)) is None
    assert "1 of 3 elements differ" in checks.compare(c, a, np.array([1.0, np.nan, -0.0], np.float32))
    assert checks.compare(c, np.array([1, 2]), np.array([1, 3])) is not None
    assert "dtype" in checks.compare(c, a, a.astype(np.float64))


def test_almost_eq_uses_an_absolute_tolerance():
    c = checks.Check("almost_eq")
    assert checks.compare(c, np.array([1.0, np.inf]), np.array([1.00009, np.inf])) is None
    assert checks.compare(c, np.array([1.0]), np.array([1.0002])) is not None
    assert checks.compare(checks.Check("almost_eq", tolerance=0.1), np.array([1.0]), np.array([1.05])) is None
    assert checks.compare(c, np.array([np.inf]), np.array([-np.inf])) is not None
    z = np.array([1 + 2j], np.complex64)
    assert checks.compare(c, z, z + 1e-3j) is not None


def test_close_counts_units_in_the_last_place():
    one = np.array([1.0], np.float32)
    up3 = one.copy()
    for _ in range(3):
        up3 = np.nextafter(up3, np.float32(2))
    assert checks.ulp_difference(one, up3)[0] == 3
    assert checks.compare(checks.Check("close"), one, up3) is None
    assert checks.compare(checks.Check("close"), one, np.nextafter(up3, np.float32(2))) is not None
    assert checks.compare(checks.Check("close", max_ulp=0), one, up3) is not None
    nans = np.array([np.nan, -np.nan], np.float32)
    assert checks.compare(checks.Check("close"), nans, nans[::-1].copy()) is None
    assert checks.compare(checks.Check("close"), nans, one.repeat(2)) is not None
    # Across zero the distances from zero add up; subnormals count as zero or one.
    tiny = np.array([np.finfo(np.float32).smallest_normal], np.float32)
    assert checks.ulp_difference(tiny, -tiny)[0] == 2
    assert checks.ulp_difference(np.array([0.0], np.float32), np.array([1e-45], np.float32))[0] == 0
    b = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    assert checks.compare(checks.Check("close"), b, np.nextafter(b.astype(np.float32), 3).astype(ml_dtypes.bfloat16)) is None
    assert checks.compare(checks.Check("close"), np.array(1.0, np.float32), np.array(1.0, np.float32)) is None


# --- harness ---------------------------------------------------------------------

def test_check_syntax_is_rewritten_in_place():
    text = textwrap.dedent("""\
        func.func @t() {
          %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
          check.expect_almost_eq_const %a, dense<[1.0,
                                                   2.0]> : tensor<2xf32> {tolerance = 0.5 : f64}
          check.expect_close %a, %a, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
          check.expect_eq %a, %a : tensor<2xf32>
          check.expect_almost_eq_const %a,
              dense<[1.0, 2.0]> : tensor<2xf32>
          func.return
        }""")
    out = harness.rewrite_check_syntax(text)
    lines = out.split("\n")
    assert len(lines) == len(text.split("\n"))
    assert lines[2].strip().startswith("%__mlxc_expected_0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>")
    assert '"check.expect_almost_eq"(%a, %__mlxc_expected_0) {tolerance = 0.5 : f64}' in lines[2]
    assert lines[3] == ""
    assert '"check.expect_close"(%a, %a) {max_ulp_difference = 3 : i64}' in lines[4]
    prepared = harness.prepare(text, "t")
    assert [c.kind for c in prepared.checks] == ["almost_eq", "close", "eq", "almost_eq"]
    assert prepared.checks[0].tolerance == 0.5 and prepared.checks[1].max_ulp == 3
    outputs = mlxc.compile(prepared.text, entry="t")()
    assert len(outputs) == 8
    np.testing.assert_array_equal(outputs[1], [1.0, 2.0])


def test_harness_rejects_what_it_cannot_handle():
    with pytest.raises(harness.OutOfScope, match="probe"):
        harness.rewrite_check_syntax("  check.expect_serialized_eq %x, probe_id = \"a\" : tensor<f32>")
    with pytest.raises(harness.HarnessError, match="has no checks"):
        harness.prepare("func.func @t() { func.return }", "t")


def test_harness_refuses_a_check_whose_result_another_op_reads():
    # The checks are erased once their operands are returned: erasing one whose i1 the
    # second check reads left that operand pointing at freed memory (a segfault under
    # M_PERTURB, which conftest turns on).
    text = textwrap.dedent("""\
        func.func @t() -> tensor<i1> {
          %a = stablehlo.constant dense<1.0> : tensor<f32>
          %0 = stablehlo.custom_call @check.eq(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %t = stablehlo.constant dense<true> : tensor<i1>
          %1 = stablehlo.custom_call @check.eq(%0, %t) : (tensor<i1>, tensor<i1>) -> tensor<i1>
          return %1 : tensor<i1>
        }""")
    with pytest.raises(harness.HarnessError,
                       match=r"t.mlir:3: the result of stablehlo.custom_call is read by another op"):
        harness.prepare(text, "t", name="t.mlir")
    # Returning a check.eq's result, as the quantized suites do, stays supported.
    prepared = harness.prepare(text.replace("%1 = stablehlo.custom_call @check.eq(%0, %t)",
                                            "%1 = stablehlo.custom_call @check.eq(%t, %t)"), "t")
    assert [c.kind for c in prepared.checks] == ["eq", "eq"]


def _fake_suite(tmp_path):
    (tmp_path / "interpret").mkdir()
    (tmp_path / "interpret" / "ok.mlir").write_text(textwrap.dedent("""\
        func.func @ok() {
          %a = stablehlo.constant dense<2> : tensor<i32>
          %b = stablehlo.add %a, %a : tensor<i32>
          check.expect_eq_const %b, dense<4> : tensor<i32>
          func.return
        }
        // -----
        func.func @wrong() {
          %a = stablehlo.constant dense<2> : tensor<i32>
          check.expect_eq_const %a, dense<3> : tensor<i32>
          func.return
        }
        """))
    (tmp_path / "interpret" / "all_gather.mlir").write_text("func.func @f() { check.expect_eq_const }\n")
    return suites.discover(str(tmp_path))


def test_discovery_and_judgement(tmp_path):
    cases = _fake_suite(tmp_path)
    ids = [c.id for c in cases]
    assert ids == ["interpret/all_gather.mlir#0@f", "interpret/ok.mlir#0@ok", "interpret/ok.mlir#1@wrong"]
    assert cases[0].out_of_scope and "collective" in cases[0].out_of_scope
    assert run_case(cases[1], str(tmp_path)).status == PASS
    wrong = run_case(cases[2], str(tmp_path))
    assert wrong.status == FAIL and "2 (actual) vs" in wrong.detail and "ok.mlir:10" in wrong.detail


def test_runner_isolates_crashes_and_hangs(tmp_path):
    cases = _fake_suite(tmp_path)
    fake = tmp_path / "worker.py"
    fake.write_text(textwrap.dedent("""\
        import json, os, sys, time
        for line in sys.stdin:
            case = json.loads(line)
            if case["entry"] == "ok":
                os.abort()          # crash on the first case
            if case["entry"] == "wrong":
                time.sleep(60)      # hang on the second
        """))
    results = runner.run(cases, str(tmp_path), jobs=1, timeout=3, worker=[sys.executable, str(fake)])
    assert [r.status for r in results] == ["out_of_scope", CRASH, TIMEOUT]
    assert "signal 6" in results[1].detail


# --- the suites -----------------------------------------------------------------

def _known_failures() -> set[str]:
    with open(KNOWN) as f:
        # Ids hold '#' themselves ("interpret/abs.mlir#2@..."): the id is the first word.
        return {line.split()[0] for line in f if line.strip() and not line.startswith("#")}


@pytest.mark.skipif(not os.path.isdir(DATA), reason="../shared/conformance is not present")
def test_conformance_suites():
    cases = suites.discover(DATA)
    results = runner.run(cases, DATA, jobs=2)
    print(runner.report(cases, results, failures=0))
    known = _known_failures()
    unexpected = [r for r in results if r.status not in (PASS, "out_of_scope") and r.id not in known]
    fixed = [r.id for r in results if r.status == PASS and r.id in known]
    messages = [f"{r.id}: {r.status}: {r.detail[:200]}" for r in unexpected]
    assert not unexpected, "new conformance failures:\n" + "\n".join(messages)
    assert not fixed, ("these cases pass now; remove them from conformance_known_failures.txt "
                       "(python tools/known_failures.py):\n" + "\n".join(fixed))


def test_oracle_comparison_is_normwise_for_floats():
    from mlxc.conformance.execute import _compare_with_oracle
    e = np.array([1.0, -2.0, 0.003436312], np.float32)
    # A dot product added in another order: a small entry moves by ~8e-9, far more
    # than 3 ulp of itself but ~eps of the result's size.
    assert _compare_with_oracle(np.array([1.0, -2.0, 0.003436304], np.float32), e) is None
    assert "normwise" in _compare_with_oracle(np.array([1.0, -2.0, 0.0035], np.float32), e)
    assert _compare_with_oracle(np.array([1.0, np.nan, 0.0], np.float32), e) is not None
    assert _compare_with_oracle(np.array([1, 2]), np.array([1, 3])) is not None



def _triangular_solve_program(dtype, a_shape, b_shape, left_side, lower, transpose, unit):
    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"

    return textwrap.dedent(f"""
        func.func @main(%a: {t(a_shape)}, %b: {t(b_shape)}) -> {t(b_shape)} {{
          %x = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left_side).lower()},
              lower = {str(lower).lower()}, transpose_a = #stablehlo<transpose {transpose}>,
              unit_diagonal = {str(unit).lower()}}} : ({t(a_shape)}, {t(b_shape)}) -> {t(b_shape)}
          return %x : {t(b_shape)}
        }}""")


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
@pytest.mark.parametrize("unit", [True, False])
def test_numpy_triangular_solve_oracle_agrees_with_the_interpreter(left_side, lower, transpose,
                                                                   unit):
    # The oracle solves lone triangular_solve programs with numpy, because the
    # interpreter aborts on batched complex ones; where the interpreter works, the two
    # agree. (It crashes on ADJOINT of a real matrix, which is its TRANSPOSE.)
    from mlxc.conformance import oracle

    b_shape = (4, 3) if left_side else (3, 4)
    flags = (left_side, lower, transpose, unit)
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    (by_numpy,) = oracle.interpret(_triangular_solve_program("f32", (4, 4), b_shape, *flags),
                                   [a, b])
    plain = flags[:2] + ("TRANSPOSE" if transpose == "ADJOINT" else transpose, unit)
    (by_interpreter,) = oracle.interpret(
        _triangular_solve_program("f32", (4, 4), b_shape, *plain), [a, b], numpy_solve=False)
    np.testing.assert_allclose(by_numpy, by_interpreter, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("left_side", [True, False])
def test_numpy_triangular_solve_oracle_on_batched_complex_adjoint(left_side):
    # The case the interpreter aborts on: check the solution by multiplying back.
    from mlxc.conformance import oracle

    b_shape = (3, 4, 2) if left_side else (3, 2, 4)
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))
         + 4 * np.eye(4)).astype(np.complex64)
    b = (rng.standard_normal(b_shape) + 1j * rng.standard_normal(b_shape)).astype(np.complex64)
    text = _triangular_solve_program("complex<f32>", (3, 4, 4), b_shape, left_side, False,
                                     "ADJOINT", False)
    (x,) = oracle.interpret(text, [a, b])
    op_a = np.swapaxes(np.triu(a), -1, -2).conj()
    back = op_a @ x if left_side else x @ op_a
    assert x.dtype == np.complex64
    np.testing.assert_allclose(back, b, rtol=1e-4, atol=1e-4)
