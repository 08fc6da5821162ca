"""Where a compile's time goes: per stage always, per pass with MLXC_TIMING=1.

A compile records into the timer of its thread (`recording()`); the pipeline runner
adds one row per stage, or one per pass when detailed timing is on, and the CPU target
one per step of LLVM code generation. `exe.compile_stats()` returns the rows, and with
MLXC_TIMING=1 `mlxc.compile` prints them as a table on stderr.

Per-pass timing runs each pass of a stage in a pass manager of its own (kept, like
the stages' ones, for the next compile), so a stage's passes add up to nearly the
stage's time without it: MLIR's own timing report would go to the C stderr, not to
Python.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import time
from typing import Iterator, Optional

_log = logging.getLogger("mlxc")


class CompileTimer:
    """Rows of (group, name, seconds) in the order they ran; a group is 'frontend', a
    stage's name or 'llvm'."""

    def __init__(self, detailed: bool = False, progress_after: Optional[float] = None):
        self.detailed = detailed
        self.rows: list[tuple[str, str, float]] = []
        self._start = time.perf_counter()
        self.total_s: Optional[float] = None
        self._progress_after = progress_after
        self._reported: set = set()

    def add(self, group: str, name: str, seconds: float) -> None:
        self.rows.append((group, name, seconds))
        self._progress(group)

    def _progress(self, group: str) -> None:
        """Past `progress_after` seconds, say once per group (a stage, codegen) that it
        has run: a long compile shows where it is."""
        if self._progress_after is None or group in self._reported:
            return
        elapsed = time.perf_counter() - self._start
        if elapsed < self._progress_after:
            return
        self._reported.add(group)
        message = f"mlxc: compiling: {group} done, {elapsed:.1f} s in"
        _log.info(message)
        print(message, file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def section(self, group: str, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(group, name, time.perf_counter() - t)

    def finish(self) -> None:
        self.total_s = time.perf_counter() - self._start

    def groups(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for group, _, s in self.rows:
            out[group] = out.get(group, 0.0) + s
        return out

    def stats(self) -> dict:
        """What exe.compile_stats() returns."""
        return {"total_s": self.total_s, "groups": self.groups(),
                "rows": [{"group": g, "name": n, "seconds": s} for g, n, s in self.rows]}


def table(stats: dict, top: int = 12) -> str:
    """A readable table of `stats` (CompileTimer.stats()): each group with its share of
    the compile, and under it its `top` costliest rows."""
    total = stats["total_s"] or sum(stats["groups"].values()) or 1e-12
    lines = [f"mlxc compile time: {total * 1e3:.1f} ms"]
    by_group: dict[str, list] = {}
    for r in stats["rows"]:
        by_group.setdefault(r["group"], []).append(r)
    for group, seconds in stats["groups"].items():
        lines.append(f"  {group:<44} {seconds * 1e3:9.1f} ms {100 * seconds / total:5.1f}%")
        rows = by_group[group]
        if len(rows) == 1 and rows[0]["name"] == group:
            continue
        merged: dict[str, list] = {}
        for r in rows:  # a pass that runs twice in a stage: one row, its count beside it
            merged.setdefault(r["name"], []).append(r["seconds"])
        ranked = sorted(merged.items(), key=lambda kv: -sum(kv[1]))
        for name, times in ranked[:top]:
            count = f" x{len(times)}" if len(times) > 1 else ""
            lines.append(f"      {(name + count)[:40]:<40} {sum(times) * 1e3:9.1f} ms "
                         f"{100 * sum(times) / total:5.1f}%")
        if len(ranked) > top:
            rest = sum(sum(t) for _, t in ranked[top:])
            lines.append(f"      {f'({len(ranked) - top} more)':<40} {rest * 1e3:9.1f} ms "
                         f"{100 * rest / total:5.1f}%")
    other = total - sum(stats["groups"].values())
    lines.append(f"  {'(unaccounted: caching, signature, Python)':<44} {other * 1e3:9.1f} ms "
                 f"{100 * other / total:5.1f}%")
    return "\n".join(lines)


_current: contextvars.ContextVar[Optional[CompileTimer]] = contextvars.ContextVar(
    "mlxc_compile_timer", default=None)


def current() -> Optional[CompileTimer]:
    """The timer of the compile running on this thread, if any."""
    return _current.get()


@contextlib.contextmanager
def recording(detailed: bool) -> Iterator[CompileTimer]:
    """Record the compile run inside the block; with `detailed`, print its table on
    stderr at the end."""
    from . import settings

    timer = CompileTimer(detailed, progress_after=settings.get("progress"))
    token = _current.set(timer)
    try:
        yield timer
    finally:
        _current.reset(token)
        timer.finish()
    if detailed:
        print(table(timer.stats()), file=sys.stderr)


@contextlib.contextmanager
def section(group: str, name: str) -> Iterator[None]:
    """Time the block into the current compile's timer (nothing when there is none)."""
    timer = _current.get()
    if timer is None:
        yield
        return
    with timer.section(group, name):
        yield
