"""Pipelines as data: named stages of passes, each pass with the reason it is there.

`str(pipeline)` is the exact MLIR pass-pipeline string that runs (our Python passes
appear under their registered `mlxc-*` names), so it can be pasted into
`mlxc-opt --pass-pipeline=...`; `parse_pipeline(str(p)).passes == p.passes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence


@dataclass(frozen=True)
class OnlyWith:
    """A pass that can only change a module holding, at the start of its stage, one of
    `ops` (op names, or dialect prefixes ending in ".", as "complex.") or a value whose
    element type is one of `types` ("bf16"). Choosing one is a proof, not a guess: the
    pass rewrites only such ops or values, and no pass before it in the stage creates
    one unless the module already holds one of them. Each combination of skipped passes
    is a pass manager of its own (built, and initialized on its first run, once per
    context): worth it for costly passes in stages without canonicalize, whose first
    run gathers every op's patterns."""

    ops: tuple[str, ...] = ()
    types: tuple[str, ...] = ()

    def holds(self, names, element_types=None) -> bool:
        """Whether a module whose op names are `names` (a set) and whose values' element
        types are `element_types` (a set of type names; None: not known) may need the
        pass."""
        for want in self.ops:
            if want.endswith("."):
                if any(n.startswith(want) for n in names):
                    return True
            elif want in names:
                return True
        if self.types:
            return element_types is None or not element_types.isdisjoint(self.types)
        return False

    def __str__(self) -> str:
        parts = [w + "*" if w.endswith(".") else w for w in self.ops]
        if self.types:
            parts.append(",".join(self.types) + " values")
        return "only with " + " or ".join(parts)


def only_with(*ops: str, types: Sequence[str] = ()) -> OnlyWith:
    return OnlyWith(tuple(ops), tuple(types))


@dataclass(frozen=True)
class Pass:
    """One pass: `name{k=v ...}` nested under `anchor` (op names, outermost first).

    `when`, if set, lets a stage skip the pass on a module it provably leaves alone;
    the printed pipeline still lists it (it is not part of the pipeline text)."""

    name: str
    options: tuple[tuple[str, str], ...] = ()
    anchor: tuple[str, ...] = ()
    why: str = field(default="", compare=False)
    when: Optional[OnlyWith] = field(default=None, compare=False)

    def text(self) -> str:
        if not self.options:
            return self.name
        opts = " ".join(k if v is None else f"{k}={v}" for k, v in self.options)
        return f"{self.name}{{{opts}}}"

    def option(self, key: str, default: Optional[str] = None) -> Optional[str]:
        for k, v in self.options:
            if k == key:
                return "true" if v is None else v
        return default


def nested(anchor: str, *passes: Pass) -> list[Pass]:
    """`passes` nested one level deeper, under `anchor` (e.g. "func.func")."""
    return [Pass(p.name, p.options, (anchor,) + p.anchor, p.why, p.when) for p in passes]


def mlir_pass(name: str, why: str, anchor: str | tuple[str, ...] = (), *,
              when: Optional[OnlyWith] = None, **options) -> Pass:
    """A pass by its command-line name; options use Python names (`a_b` -> `a-b`).

    A value of True prints as a bare flag (`{bufferize-function-boundaries}`).
    """
    opts = tuple((k.replace("_", "-"), None if v is True else _format_value(v))
                 for k, v in options.items())
    anchor = (anchor,) if isinstance(anchor, str) else tuple(anchor)
    return Pass(name, opts, anchor, why, when)


def _format_value(v) -> str:
    if v is False:
        return "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def render(passes: Sequence[Pass], root: str = "builtin.module") -> str:
    """The textual pipeline for `passes`, grouping neighbours that share an anchor."""
    return f"{root}({render_elements(passes)})"


def render_elements(passes: Sequence[Pass]) -> str:
    """The comma-separated elements of `render`, without the root op."""

    def group(items: Sequence[Pass], depth: int) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(items):
            p = items[i]
            if len(p.anchor) == depth:
                out.append(p.text())
                i += 1
                continue
            head = p.anchor[depth]
            j = i
            while j < len(items) and len(items[j].anchor) > depth and items[j].anchor[depth] == head:
                j += 1
            out.append(f"{head}({','.join(group(items[i:j], depth + 1))})")
            i = j
        return out

    return ",".join(group(list(passes), 0))


@dataclass(frozen=True)
class Stage:
    """A named step of a pipeline; its last pass checks the stage's contract."""

    name: str
    passes: tuple[Pass, ...]
    why: str = field(default="", compare=False)


@dataclass(frozen=True)
class Pipeline:
    name: str
    stages: tuple[Stage, ...]

    @property
    def passes(self) -> list[Pass]:
        return [p for s in self.stages for p in s.passes]

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"pipeline '{self.name}' has no stage '{name}'; "
                       f"its stages are: {', '.join(self.stage_names)}")

    def slice(self, start_after: Optional[str] = None, stop_after: Optional[str] = None) -> "Pipeline":
        """The stages after `start_after` up to and including `stop_after`."""
        names = self.stage_names
        lo = names.index(self.stage(start_after).name) + 1 if start_after else 0
        hi = names.index(self.stage(stop_after).name) + 1 if stop_after else len(names)
        if lo > hi:
            raise ValueError(f"cannot start after stage '{start_after}' and stop after "
                             f"the earlier stage '{stop_after}'")
        return Pipeline(self.name, self.stages[lo:hi])

    def __str__(self) -> str:
        return render(self.passes)

    def describe(self) -> str:
        """A readable listing: each stage, each pass and why it is there."""
        lines = [f"pipeline '{self.name}':"]
        for s in self.stages:
            lines.append(f"  stage {s.name}: {s.why}")
            if any(p.when for p in s.passes):
                lines.append("    (a pass marked [only with ...] is skipped when the module holds "
                             "none of those ops as the stage starts)")
            for p in s.passes:
                where = "".join(a + "/" for a in p.anchor)
                lines.append(f"    {where}{p.text()}" + (f"  [{p.when}]" if p.when else ""))
                if p.why:
                    lines.append(f"        # {p.why}")
        lines.append(f"  as a pass pipeline: {self}")
        return "\n".join(lines)


def flatten(stages: Iterable[Stage]) -> list[Pass]:
    return [p for s in stages for p in s.passes]
