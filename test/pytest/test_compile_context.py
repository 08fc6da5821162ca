"""Compiles on one thread share an MLIR context and its pass managers (compile_context.py):
results stay right from one program to the next, a failed compile leaves nothing
behind, contexts are replaced after MAX_USES compiles, SOURCE_BUDGET bytes of sources or
a large source, and threads never share one."""

import threading

import numpy as np
import pytest

import mlxc
from mlxc import compile_context, settings

ADD = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""

# Same function name and shapes as ADD, different body: a stale pass manager or
# symbol would show up as the wrong numbers.
MUL_EXP = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}"""

MATMUL = """
func.func @main(%a: tensor<16x8xf32>, %b: tensor<8x4xf32>) -> tensor<16x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}"""

BROKEN = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<8xf32>
}"""

x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
y = np.array([1.5, 2.0, -0.5, 4.0], np.float32)


@pytest.fixture(autouse=True)
def _no_cache():
    compile_context.reset()
    with settings.override(cache=False):
        yield
    compile_context.reset()


def _check_all(exes):
    add, mul_exp, matmul = exes
    np.testing.assert_array_equal(add(x, y), x + y)
    np.testing.assert_allclose(mul_exp(x, y), np.exp(x * y), rtol=1e-6)
    a = np.arange(128, dtype=np.float32).reshape(16, 8) / 7
    b = np.arange(32, dtype=np.float32).reshape(8, 4) - 3
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-5)


def test_programs_in_turn_share_one_context_and_stay_right():
    exes = [mlxc.compile(ADD)]
    ctx = compile_context._slot.context
    assert ctx is not None and compile_context._slot.pass_managers
    exes += [mlxc.compile(MUL_EXP), mlxc.compile(MATMUL)]
    assert compile_context._slot.context is ctx
    _check_all(exes)
    # The same programs again, now from pass managers that have run before.
    _check_all([mlxc.compile(ADD), mlxc.compile(MUL_EXP), mlxc.compile(MATMUL)])


def test_failed_compile_drops_the_context_and_the_next_one_works():
    mlxc.compile(ADD)
    ctx = compile_context._slot.context
    with pytest.raises(mlxc.CompileError, match="tensor<8xf32>"):
        mlxc.compile(BROKEN)
    assert compile_context._slot.context is None
    np.testing.assert_allclose(mlxc.compile(MUL_EXP)(x, y), np.exp(x * y), rtol=1e-6)
    assert compile_context._slot.context is not None and compile_context._slot.context is not ctx


def test_context_replaced_after_max_uses(monkeypatch):
    monkeypatch.setattr(compile_context, "MAX_USES", 2)
    mlxc.compile(ADD)
    first = compile_context._slot.context
    mlxc.compile(ADD)
    assert compile_context._slot.context is None  # used twice: dropped
    np.testing.assert_array_equal(mlxc.compile(ADD)(x, y), x + y)
    assert compile_context._slot.context is not first


def test_context_replaced_once_its_sources_add_up_to_the_budget(monkeypatch):
    monkeypatch.setattr(compile_context, "SOURCE_BUDGET", 2 * len(ADD) + 1)
    mlxc.compile(ADD)
    mlxc.compile(ADD)
    first = compile_context._slot.context
    assert first is not None  # 2 x len(ADD) bytes: within the budget
    mlxc.compile(ADD)
    assert compile_context._slot.context is None  # over it: dropped
    np.testing.assert_array_equal(mlxc.compile(ADD)(x, y), x + y)
    assert compile_context._slot.context is not first


def test_large_source_is_not_kept(monkeypatch):
    monkeypatch.setattr(compile_context, "LARGE_SOURCE", len(ADD) - 1)
    np.testing.assert_array_equal(mlxc.compile(ADD)(x, y), x + y)
    assert compile_context._slot.context is None


def test_compile_inside_a_compile_gets_its_own_context():
    with compile_context.compile_context(ADD) as outer:
        exe = mlxc.compile(MUL_EXP)
        assert compile_context._slot.context is outer
    np.testing.assert_allclose(exe(x, y), np.exp(x * y), rtol=1e-6)


def test_threads_compile_at_once_each_in_its_own_context():
    results, contexts, errors = {}, {}, []

    def work(i):
        try:
            for _ in range(3):
                exes = [mlxc.compile(ADD), mlxc.compile(MUL_EXP), mlxc.compile(MATMUL)]
                _check_all(exes)
            contexts[i] = compile_context._slot.context
            results[i] = True
        except Exception as e:  # reported below, with the thread's error
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {0: True, 1: True}
    assert contexts[0] is not None and contexts[0] is not contexts[1]


def test_pass_managers_kept_by_pipeline_text_but_not_when_timing():
    from mlxc.frontend import source as frontend
    from mlxc.pipelines import runner
    from mlxc.targets import get

    stages = get("cpu").pipeline("main").stages[:2]
    kept: dict = {}
    with compile_context.compile_context(ADD):
        for timing in (True, False):
            module = frontend.load(ADD).module
            runner.run_stages(module, stages, options=runner.RunOptions(
                verify_each=False, timing=timing, pass_managers=kept))
            if timing:
                assert kept == {}  # a timed pass manager reports its own runs only
    assert len(kept) == len(stages)
