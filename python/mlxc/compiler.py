"""`mlxc.compile`: source in, callable executable out, through the target's pipeline."""

from __future__ import annotations

import io
import threading
from typing import Optional

from . import cache, compile_timing, settings, targets
from ._mlir import ir
from .compile_context import compile_context, pass_managers
from .errors import DynamicShapeError
from .frontend import source as frontend
from .passes import record_signature, select_entry
from .passes.specialize_arguments import specialize_values
from .pipelines import runner
from .pipelines.contracts import STAGE_ATTR
from .pipelines.model import Pipeline, mlir_pass
from .runtime.executable import Executable, check_count, coerce


def pipeline(target: str = "cpu", entry: str = "main") -> Pipeline:
    """The pipeline `compile` runs for `target`; `print()` it for the pass-pipeline string."""
    return targets.get(target).pipeline(entry)


def _recorded_stage(module) -> Optional[str]:
    attrs = module.operation.attributes
    return ir.StringAttr(attrs[STAGE_ATTR]).value if STAGE_ATTR in attrs else None


def _run(module, tgt, entry: str, start_after: Optional[str], stop_after: Optional[str]):
    pipe = tgt.pipeline(entry)
    if start_after is not None:
        pipe.stage(start_after)  # a clear error for an unknown stage
    start = start_after or _recorded_stage(module)
    todo = pipe.slice(start, stop_after)
    dump_dir = settings.get("dump_dir")
    first = pipe.stage_names.index(todo.stages[0].name) + 1 if todo.stages else 0
    if dump_dir and start is None:
        runner.dump(module, dump_dir, 0, "input")
    runner.run_stages(module, todo.stages, first_index=first,
                      options=runner.RunOptions(dump_dir=dump_dir, verify_each=False,
                                                pass_managers=pass_managers(module.context)))


def _entry_signature(module, entry: str):
    """The entry's signature as written (dimensions may be -1), without changing `module`."""
    probe = module.operation.clone()
    try:
        select_entry.run(probe, entry)
        record_signature.run(probe)
        return record_signature.read_signature(probe)
    finally:
        probe.erase()


def _is_dynamic(module, entry: str) -> bool:
    if _recorded_stage(module) is not None:
        return False
    return not all(t.is_static for t in _entry_signature(module, entry).inputs)


def compile(source, target: str = "cpu", entry: str = "main", *, name: Optional[str] = None,
            start_after: Optional[str] = None, **options):
    """Compile a StableHLO program for `target` and return a callable executable.

    `source` is MLIR text, MLIR bytecode, a StableHLO portable artifact, a path to
    one of these, or an MLIR module. A file dumped by MLXC_DUMP_DIR resumes after the
    stage it records; `start_after` names that stage explicitly. `name` is the file
    name used in error messages. A program with `?` dimensions is compiled for the
    shapes it is called with, once per shape. Raises `mlxc.CompileError`.
    """
    tgt = targets.get(target)
    check_options(tgt, options)
    key = cache.key(source, target, entry, start_after, options)
    cached = cache.lookup(key)
    if cached is not None:
        return cached
    with compile_timing.recording(settings.get("timing")) as timer:
        with compile_context(source):
            with timer.section("frontend", "frontend"):
                loaded = frontend.load(source, name=name)
                module = loaded.module
                dynamic = start_after is None and _is_dynamic(module, entry)
            if dynamic:
                return SpecializingExecutable(module, tgt, entry, loaded.name, options)
            _run(module, tgt, entry, start_after, None)
            exe = tgt.build(module, record_signature.read_signature(module), **options)
        with timer.section("cache", "cache"):
            cache.store(key, exe)
    if isinstance(exe, Executable):
        exe._compile_stats = timer.stats()
    return exe


def check_options(tgt, options: dict) -> None:
    """Refuse keyword options the target does not read: a misspelt option would
    otherwise compile with its default, silently."""
    known = getattr(tgt, "options", None)
    unknown = sorted(set(options) - known) if known is not None else []
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        raise TypeError(f"mlxc.compile() got unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
                        f"{names}; the {tgt.name} target takes "
                        f"{', '.join(sorted(known)) or 'none'} (and name, entry, start_after)")


def lower(source, target: str = "cpu", entry: str = "main", *, stop_after: Optional[str] = None,
          start_after: Optional[str] = None, name: Optional[str] = None) -> str:
    """The IR of `source` after stage `stop_after` (default: the last), as text."""
    tgt = targets.get(target)
    with compile_context(source):
        module = frontend.load(source, name=name).module
        _run(module, tgt, entry, start_after, stop_after)
        return module.operation.get_asm()


def fusion_report(source, entry: str = "main", *, name: Optional[str] = None) -> str:
    """The fusion groups of `source` on the CPU (targets/cpu/fusion_report.py): per group
    its fused ops, why its inputs were not fused, its schedule or kernel and a rough
    cost, with any group left as scalar loops flagged."""
    from .targets.cpu import fusion_report as report

    return report.format(fusion_groups(source, entry, name=name))


def fusion_groups(source, entry: str = "main", *, name: Optional[str] = None) -> list:
    """The fusion groups of `source` on the CPU, as fusion_report.Group records."""
    from .targets.cpu import fusion_report as report

    tgt = targets.get("cpu")
    with compile_context(source), report.collecting() as groups:
        module = frontend.load(source, name=name).module
        _run(module, tgt, entry, None, "fuse")
    return groups


class SpecializingExecutable:
    """A program with `?` dimensions: compiled on each call's shapes, cached per shape.

    JAX passes dimension sizes as leading rank-0 integer arguments; when the shapes
    alone leave a dimension unknown, the program is also specialised on the values
    of its rank-0 integer arguments (and cached per value).
    """

    def __init__(self, module, target, entry: str, name: str, options: dict):
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        self._bytecode = buf.getvalue()
        self._target = target
        self._entry = entry
        self._name = name
        self._options = options
        self.signature = _entry_signature(module, entry)
        self._in_dtypes = [t.dtype for t in self.signature.inputs]
        self._by_value: Optional[bool] = None  # learnt on the first compile
        self._cache: dict = {}
        self._lock = threading.Lock()

    def _scalar_ints(self) -> list[int]:
        return [i for i, t in enumerate(self.signature.inputs)
                if not t.shape and t.dtype.kind in "iu"]

    def _compile(self, arrays, by_value: bool) -> Executable:
        with compile_context(self._bytecode):
            module = ir.Module.parse(self._bytecode)
            types = [str(ir.RankedTensorType.get(a.shape, ir.Type.parse(spec.element_type)))
                     for a, spec in zip(arrays, self.signature.inputs)]
            runner.run_passes(module, [mlir_pass(
                "stablehlo-refine-arguments", "the call's shapes", types=",".join(types))])
            if by_value:
                specialize_values(module, self._entry,
                                  {i: int(arrays[i]) for i in self._scalar_ints()})
            with compile_timing.recording(settings.get("timing")) as timer:
                _run(module, self._target, self._entry, None, None)
                exe = self._target.build(module, record_signature.read_signature(module),
                                         **self._options)
            if isinstance(exe, Executable):
                exe._compile_stats = timer.stats()
            return exe

    def specialization(self, *args) -> Executable:
        """The executable for these arguments' shapes (compiled on first use)."""
        return self._specialize(args)[0]

    def _specialize(self, args):
        check_count(self.signature, args)
        arrays = [coerce(a, spec, i, dt) for i, (a, spec, dt)
                  in enumerate(zip(args, self.signature.inputs, self._in_dtypes))]
        shapes = tuple(a.shape for a in arrays)
        with self._lock:
            if self._by_value is not None:
                key = (shapes, self._values(arrays) if self._by_value else ())
                if key in self._cache:
                    return self._cache[key], arrays
            if self._by_value is None:
                try:
                    exe = self._compile(arrays, by_value=False)
                    self._by_value = False
                except DynamicShapeError:
                    if not self._scalar_ints():
                        raise
                    exe = self._compile(arrays, by_value=True)
                    self._by_value = True
            else:
                exe = self._compile(arrays, self._by_value)
            self._cache[(shapes, self._values(arrays) if self._by_value else ())] = exe
            return exe, arrays

    def _values(self, arrays) -> tuple:
        return tuple(int(arrays[i]) for i in self._scalar_ints())

    def __call__(self, *args):
        exe, arrays = self._specialize(args)
        return exe(*arrays)

    def save(self, path) -> None:
        raise TypeError(f"{self.signature} has '?' dimensions: an artifact has one shape per "
                        "argument; save the executable for the shapes you need: "
                        "exe.specialization(*args).save(path)")

    @property
    def num_specializations(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<mlxc.SpecializingExecutable {self.signature}>"
