"""`mlxc.compile`: source in, callable executable out, through the target's pipeline."""

from __future__ import annotations

from typing import Optional

from . import settings, targets
from ._mlir import ir, new_context
from .frontend import source as frontend
from .passes.select_entry import read_signature
from .pipelines import runner
from .pipelines.contracts import STAGE_ATTR
from .pipelines.model import Pipeline
from .runtime.executable import Executable


def pipeline(target: str = "cpu", entry: str = "main") -> Pipeline:
    """The pipeline `compile` runs for `target`; `print()` it for the pass-pipeline string."""
    return targets.get(target).pipeline(entry)


def _resume_point(module, pipe: Pipeline, start_after: Optional[str]) -> Optional[str]:
    recorded = None
    if STAGE_ATTR in module.operation.attributes:
        recorded = ir.StringAttr(module.operation.attributes[STAGE_ATTR]).value
    if start_after is None:
        return recorded
    pipe.stage(start_after)  # a clear error for an unknown stage
    return start_after


def _lower(source, target: str, entry: str, name: Optional[str], start_after: Optional[str],
           stop_after: Optional[str]):
    tgt = targets.get(target)
    pipe = tgt.pipeline(entry)
    loaded = frontend.load(source, name=name)
    module = loaded.module
    start = _resume_point(module, pipe, start_after)
    todo = pipe.slice(start, stop_after)
    dump_dir = settings.get("dump_dir")
    first = pipe.stage_names.index(todo.stages[0].name) + 1 if todo.stages else 0
    if dump_dir and start is None:
        runner.dump(module, dump_dir, 0, "input")
    runner.run_stages(module, todo.stages, first_index=first,
                      options=runner.RunOptions(dump_dir=dump_dir))
    return tgt, module, pipe


def compile(source, target: str = "cpu", entry: str = "main", *, name: Optional[str] = None,
            start_after: Optional[str] = None, **options) -> Executable:
    """Compile a StableHLO program for `target` and return a callable `Executable`.

    `source` is MLIR text, MLIR bytecode, a StableHLO portable artifact, a path to
    one of these, or an MLIR module. A file dumped by MLXC_DUMP_DIR resumes after the
    stage it records; `start_after` names that stage explicitly. `name` is the file
    name used in error messages. Raises `mlxc.CompileError`.
    """
    ctx = new_context()
    with ctx, ir.Location.unknown():
        tgt, module, pipe = _lower(source, target, entry, name, start_after, None)
        signature = read_signature(module)
        return tgt.build(module, signature, **options)


def lower(source, target: str = "cpu", entry: str = "main", *, stop_after: Optional[str] = None,
          start_after: Optional[str] = None, name: Optional[str] = None) -> str:
    """The IR of `source` after stage `stop_after` (default: the last), as text."""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        _, module, _ = _lower(source, target, entry, name, start_after, stop_after)
        return module.operation.get_asm()
