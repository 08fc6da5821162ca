"""Run pass lists and pipeline stages: pass managers, IR dumps, failure reproducers."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Optional, Sequence

from .. import compile_timing, irutil
from .. import passes as python_passes
from .. import settings
from .._mlir import ir, passmanager
from ..errors import CompileError
from . import contracts
from .model import Pass, Stage, render, render_elements


class PipelineError(ValueError):
    """A pass pipeline that cannot be built: unknown pass, bad option, wrong nesting."""


@dataclass
class RunOptions:
    print_ir_after_all: bool = False
    timing: bool = False
    dump_dir: Optional[str] = None
    repro: bool = True
    # Verify the IR after every pass (as mlir-opt does). Stages verify once at their end
    # instead: on large modules the per-pass verifier costs a third of the pipeline, and
    # a stage whose result is invalid is replayed pass by pass, verifier on, to name
    # the pass that broke it.
    verify_each: bool = True
    # Pass managers kept from earlier runs in the same context, by pipeline text:
    # building one, and the first run that initializes its passes (canonicalize
    # gathers the patterns of every loaded op), costs as much as running it on a small
    # program. The caller owns the dict and drops it with the context.
    pass_managers: Optional[dict] = None
    # Skip the passes whose `when` says they would leave this module alone (see
    # model.OnlyWith); False runs every pass, to check that skipping changes nothing.
    skip_idle_passes: bool = True


def build_pass_manager(passes: Sequence[Pass], context: ir.Context,
                       options: Optional[RunOptions] = None) -> passmanager.PassManager:
    """A pass manager running `passes` on a builtin.module; raises PipelineError."""
    opts = options or RunOptions()
    pm = passmanager.PassManager("builtin.module", context=context)
    pending: list[Pass] = []

    def flush() -> None:
        if pending:
            text = render_elements(pending)
            try:
                pm.add(text)
            except ValueError as e:
                raise PipelineError(f"invalid pass pipeline {render(pending)}:\n{e}") from None
            pending.clear()

    for p in passes:
        if not python_passes.is_python_pass(p.name):
            pending.append(p)
            continue
        flush()
        if p.anchor:
            raise PipelineError(f"pass '{p.name}' is an mlxc Python pass and runs on builtin.module "
                                f"only; it cannot be nested under {'/'.join(p.anchor)}")
        spec = python_passes.lookup(p.name)
        try:
            callable_ = spec.bind(p.options)
        except ValueError as e:
            raise PipelineError(str(e)) from None
        pm.add(callable_, name=p.name, argument=p.name, description=spec.summary)
    flush()
    if opts.print_ir_after_all:
        pm.enable_ir_printing(print_after_all=True)
    if opts.timing:
        pm.enable_timing()
    if not opts.verify_each:
        pm.enable_verifier(False)
    return pm


def validate(passes: Sequence[Pass], context: ir.Context) -> None:
    """Raise PipelineError unless `passes` form a pipeline MLIR accepts.

    Building the pass manager checks names, options and nesting, so a misnested
    pipeline is an error here rather than a failure (or abort) halfway through a run.
    """
    build_pass_manager(passes, context)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60] or "pass"


def _write(path: str, module) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(module.operation.get_asm(enable_debug_info=True))


def _repro_command(path: str, passes: Sequence[Pass]) -> str:
    return f"mlxc-opt {shlex.quote(path)} --pass-pipeline={shlex.quote(render(passes))}"


def _localize(snapshot, passes: Sequence[Pass]):
    """Rerun `passes` one by one on a copy of `snapshot` to find the failing one.

    Returns (failing pass, the IR just before it, the error it raised)."""
    work = snapshot.clone()
    for p in passes:
        before = work.clone()
        pm = build_pass_manager([p], work.context)
        try:
            pm.run(work)
        except (ir.MLIRError, CompileError) as e:
            return p, before, e
    return None, snapshot, None


def _save_repro(snapshot, passes: Sequence[Pass], stage_name: str) -> tuple[Optional[str], object]:
    """Save the input of the failing pass; returns (mlxc-opt command, the error seen)."""
    try:
        failing, before, error = _localize(snapshot, passes)
        chosen = [failing] if failing is not None else list(passes)
        directory = settings.get("repro_dir")
        os.makedirs(directory, exist_ok=True)
        name = f"{stage_name}-{_slug(chosen[0].name) if failing else 'stage'}-{os.getpid()}.mlir"
        path = os.path.join(directory, name)
        _write(path, before)
        return _repro_command(path, chosen), error
    except Exception as e:  # a reproducer is a courtesy; never hide the real error
        print(f"mlxc: could not save a reproducer: {e}", file=sys.stderr)
        return None, None


def run_passes(module, passes: Sequence[Pass], options: Optional[RunOptions] = None) -> None:
    """Run a flat pass list (e.g. from --pass-pipeline); errors raise CompileError."""
    pm = build_pass_manager(passes, module.context, options)
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        raise CompileError.from_mlir("a pass failed", e) from None


def dump_path(directory: str, index: int, name: str) -> str:
    return os.path.join(directory, f"{index:02d}-{name}.mlir")


def dump(module, directory: str, index: int, name: str) -> str:
    path = dump_path(directory, index, name)
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        f.write(module.operation.get_asm())
    return path


def active_passes(stage: Stage, names, element_types=None) -> tuple[Pass, ...]:
    """The passes of `stage` that may change a module whose op names are `names` and
    whose values' element types are `element_types` (None: not known)."""
    return tuple(p for p in stage.passes
                 if p.when is None or p.when.holds(names, element_types))


def _pass_manager(passes: Sequence[Pass], module, opts: RunOptions):
    """A pass manager for `passes`: the one kept from an earlier run when there is one.
    Returns (pass manager, key to keep it under, or None)."""
    # A pass manager reports timing and prints IR for its own runs: not kept.
    if opts.pass_managers is None or opts.timing or opts.print_ir_after_all:
        return build_pass_manager(passes, module.context, opts), None
    key = (render(passes), opts.verify_each)
    pm = opts.pass_managers.get(key)
    return (pm or build_pass_manager(passes, module.context, opts)), key


def _run_stage(passes: Sequence[Pass], module, opts: RunOptions, stage_name: str) -> None:
    """Run `passes` on `module`: one pass manager, or, with detailed timing, one per
    pass, each timed (compile_timing)."""
    timer = compile_timing.current()
    detailed = timer is not None and timer.detailed
    for group in ([[p] for p in passes] if detailed else [list(passes)]):
        pm, key = _pass_manager(group, module, opts)
        with timer.section(stage_name, group[0].name) if detailed else _untimed():
            pm.run(module.operation)
        if key is not None:
            opts.pass_managers[key] = pm
    if not opts.verify_each:
        with timer.section(stage_name, "(verify)") if detailed else _untimed():
            module.operation.verify()  # raises ir.MLIRError


@contextlib.contextmanager
def _untimed():
    yield


def run_stages(module, stages: Sequence[Stage], *, first_index: int = 1,
               options: Optional[RunOptions] = None) -> None:
    """Run `stages` in order: one pass manager each, a dump after each when asked.

    Before a stage runs, a copy of the module is kept; if the stage fails, the passes
    are replayed one by one on that copy to find the failing pass, whose input is
    saved with the `mlxc-opt` command that reproduces the failure. The module is
    verified at the end of each stage rather than after each pass (`verify_each`).
    """
    opts = options or RunOptions()
    seen = None  # (op names, element types) the previous stage's contract check saw
    # The element types of the last contract that read them. A later contract may not
    # read types (the lower stage's: two thirds of that stage's ops): its stage then
    # gets these. Sound for the `types` conditions, which name floating-point types
    # only: no lowering makes values of a float type its input had none of (bf16 and
    # f16 are computed in f32, fp8 as integers), so these are a superset.
    known_types = None
    for offset, stage in enumerate(stages):
        passes = stage.passes
        if opts.skip_idle_passes and any(p.when for p in passes):
            passes = active_passes(stage, *(seen or (irutil.op_names(module), None)))
        seen = None
        timer = compile_timing.current()
        detailed = timer is not None and timer.detailed
        started = time.perf_counter()
        with timer.section(stage.name, "(module copy for a reproducer)") \
                if detailed else _untimed():
            snapshot = module.operation.clone() if opts.repro else None
        try:
            contracts.take_seen()
            _run_stage(passes, module, opts, stage.name)
            # The contract check ends the stage: what it saw is the next stage's input.
            if passes and passes[-1].name == "mlxc-verify-stage":
                seen = contracts.take_seen()
                if seen is not None:
                    if seen[1] is None:
                        seen = (seen[0], known_types)
                    known_types = seen[1]
        except (ir.MLIRError, CompileError) as e:
            command, first_error = None, None
            if snapshot is not None:
                command, first_error = _save_repro(snapshot, passes, stage.name)
            # Without the per-pass verifier a later pass may trip over IR an earlier one
            # broke: the replay, verifier on, finds the first failure; report that one.
            if not opts.verify_each and first_error is not None:
                e = first_error
            if isinstance(e, CompileError):
                raise type(e)(e.summary, e.diagnostics, e.reproducer or command) from None
            raise CompileError.from_mlir(f"stage '{stage.name}' failed", e, command) from None
        finally:
            if snapshot is not None:
                snapshot.erase()
            if timer is not None and not detailed:
                timer.add(stage.name, stage.name, time.perf_counter() - started)
        if opts.dump_dir:
            dump(module, opts.dump_dir, first_index + offset, stage.name)
