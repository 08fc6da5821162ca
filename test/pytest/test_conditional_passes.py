"""Passes a stage skips when the module lacks their ops (model.OnlyWith): the IR after every
stage is the same as when every pass runs, and the listing still shows every pass."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from helpers import export_program
from mlxc._mlir import ir, new_context
from mlxc.pipelines import runner
from mlxc.pipelines.model import Stage, only_with


def _stage_outputs(text: str, skip: bool) -> list[str]:
    """The module's text after each stage of the cpu pipeline."""
    out = []
    with new_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(text, context=ctx)
        for stage in mlxc.pipeline("cpu").stages:
            runner.run_stages(module, [stage], options=runner.RunOptions(
                verify_each=False, skip_idle_passes=skip))
            out.append(str(module))
    return out


_rng = np.random.default_rng(0)
_x = _rng.standard_normal((64, 256)).astype(np.float32)
_PROGRAMS = {
    # no math, no complex: the math/complex conversions are skipped
    "plain": (lambda x: (x * 2.0 + 1.0).sum(axis=0), _x),
    # math ops: their lowerings run
    "math": (lambda x: jnp.tanh(x) + jnp.log1p(jnp.abs(x)), _x),
    # complex products, and parallel tile loops large enough for the thread pool
    "complex": (lambda x: jnp.abs((x + 1j * x) * (x - 2j)), np.tile(_x, (16, 4))),
    # bf16 and fp8 values: the small-float emulation and casts run
    "bf16": (lambda x: (x.astype(jnp.bfloat16) * 3).astype(jnp.float32).sum(axis=1), _x),
    "fp8": (lambda x: x.astype(jnp.float8_e4m3fn).astype(jnp.float32) + 1.0, _x),
}


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_skipping_idle_passes_changes_no_stage_output(name):
    fn, x = _PROGRAMS[name]
    text, _, _ = export_program(fn, x)
    skipped = _stage_outputs(text, skip=True)
    every = _stage_outputs(text, skip=False)
    stages = mlxc.pipeline("cpu").stage_names
    for stage, a, b in zip(stages, skipped, every):
        assert a == b, f"stage '{stage}' differs when idle passes are skipped"


def test_active_passes_follow_the_module_ops():
    llvm = mlxc.pipeline("cpu").stage("llvm")
    plain = {p.name for p in runner.active_passes(llvm, {"func.func", "arith.addf", "vector.load"})}
    assert "convert-complex-to-llvm" not in plain and "convert-math-to-libm" not in plain
    assert "finalize-memref-to-llvm" in plain and "mlxc-verify-stage" in plain
    with_complex = {p.name for p in runner.active_passes(llvm, {"func.func", "complex.re"})}
    # complex ops may become math ops: the math conversions stay too
    assert {"convert-complex-to-llvm", "convert-math-to-libm"} <= with_complex


def test_small_float_passes_follow_the_element_types():
    lower = mlxc.pipeline("cpu").stage("lower")
    small = {"mlxc-keep-small-float-roundings", "arith-emulate-unsupported-floats",
             "mlxc-expand-small-float-casts"}
    names = {"func.func", "arith.addf"}
    assert not small & {p.name for p in runner.active_passes(lower, names, {"f32", "index"})}
    with_bf16 = {p.name for p in runner.active_passes(lower, names, {"f32", "bf16"})}
    assert {"mlxc-keep-small-float-roundings", "arith-emulate-unsupported-floats"} <= with_bf16
    assert "mlxc-expand-small-float-casts" not in with_bf16
    # Types not known (the stage did not start from a contract that read them): all run.
    assert small <= {p.name for p in runner.active_passes(lower, names, None)}


def test_only_with_matches_names_and_dialect_prefixes():
    cond = only_with("complex.", "omp.parallel")
    assert cond.holds({"complex.mul"}) and cond.holds({"omp.parallel", "func.func"})
    assert not cond.holds({"omp.wsloop", "func.func", "math.exp"})
    assert not cond.holds(set())
    assert str(cond) == "only with complex.* or omp.parallel"
    typed = only_with(types=("bf16", "f16"))
    assert typed.holds(set(), {"bf16", "f32"}) and typed.holds(set(), None)
    assert not typed.holds({"arith.extf"}, {"f32", "i64"})
    assert str(typed) == "only with bf16,f16 values"


def test_conditional_passes_are_listed_and_marked():
    p = mlxc.pipeline("cpu")
    text = p.describe()
    assert "convert-complex-to-llvm  [only with complex.*]" in text
    # The pipeline string is every pass: a condition is not part of it.
    assert "convert-complex-to-llvm" in str(p)
    stage = Stage("s", (p.stage("llvm").passes[0],))
    assert runner.active_passes(stage, set()) == stage.passes


def _one_run(text: str, skip: bool, seen: dict, monkeypatch):
    """The module after every stage run in one run_stages call (so each stage starts
    from what the one before it checked), and the passes each stage ran into `seen`."""
    original = runner.active_passes

    def recording(stage, names, element_types=None):
        active = original(stage, names, element_types)
        seen[stage.name] = {p.name for p in active}
        return active

    with monkeypatch.context() as patch, new_context() as ctx, ir.Location.unknown():
        patch.setattr(runner, "active_passes", recording)
        module = ir.Module.parse(text, context=ctx)
        runner.run_stages(module, mlxc.pipeline("cpu").stages, options=runner.RunOptions(
            verify_each=False, skip_idle_passes=skip))
        return str(module)


@pytest.mark.parametrize("name", ["plain", "bf16"])
def test_element_types_carry_past_a_contract_that_does_not_read_them(name, monkeypatch):
    """The lower stage's contract reads no types; the llvm stage still knows the
    bufferize stage's, so an f32 program skips the bf16/f16 move rewriting (a walk of
    every LLVM op, a sixth of a decoder's compile) and a bf16 program runs it; either
    way the result is that of every pass run."""
    fn, x = _PROGRAMS[name]
    text, _, _ = export_program(fn, x)
    seen: dict = {}
    skipped = _one_run(text, True, seen, monkeypatch)
    assert ("mlxc-small-float-moves" in seen["llvm"]) == (name == "bf16"), seen["llvm"]
    assert skipped == _one_run(text, False, {}, monkeypatch)
