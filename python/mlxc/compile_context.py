"""The MLIR context a compile runs in: one per thread, reused by that thread's next compiles.

Making a context loads every dialect the bindings know, and tearing one down frees
them again: 10 to 20 ms per compile, as long as compiling a small program takes. The
pass managers built in a context are kept with it (runner.RunOptions.pass_managers):
their first run gathers the canonicalization patterns of every loaded op.
A context is not thread-safe, so each thread keeps its own. It also keeps every type
and attribute it ever uniqued (a program's constants among them) until it dies, so
it is replaced once the sources compiled in it add up to `SOURCE_BUDGET` bytes (or
after `MAX_USES` compiles), after a compile whose source is larger than
`LARGE_SOURCE` bytes, and after a compile that failed (whatever state a failed pass
left behind goes with it). A replacement costs the next compile 15-20 ms, so the
bounds are loose: a few dozen typical programs share one context.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterator, Optional

from ._mlir import ir, new_context

MAX_USES = 256
LARGE_SOURCE = 1 << 20
SOURCE_BUDGET = 16 << 20


class _Slot(threading.local):
    context: Optional[ir.Context] = None
    pass_managers: Optional[dict] = None  # see runner.RunOptions.pass_managers
    uses: int = 0
    source_bytes: int = 0
    busy: bool = False


_slot = _Slot()


def _size(source) -> int:
    try:
        if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                                and len(source) < 4096 and os.path.isfile(source)):
            return os.path.getsize(source)
    except OSError:
        pass
    if isinstance(source, (str, bytes, bytearray, memoryview)):
        return len(source)
    return LARGE_SOURCE + 1  # a module: its size is unknown, so keep nothing it leaves


@contextlib.contextmanager
def compile_context(source=None) -> Iterator[ir.Context]:
    """Enter this thread's compile context (with an unknown location) for one compile."""
    slot = _slot
    if slot.busy:  # a compile inside a compile (a pass that compiles): a context of its own
        with new_context() as ctx, ir.Location.unknown():
            yield ctx
        return
    if slot.context is None:
        slot.context, slot.pass_managers, slot.uses, slot.source_bytes = new_context(), {}, 0, 0
    ctx = slot.context
    slot.busy = True
    ok = False
    try:
        with ctx, ir.Location.unknown():
            yield ctx
        ok = True
    finally:
        slot.busy = False
        slot.uses += 1
        size = _size(source)
        slot.source_bytes += size
        if not ok or slot.uses >= MAX_USES or size > LARGE_SOURCE or \
                slot.source_bytes > SOURCE_BUDGET:
            reset()


def pass_managers(ctx: ir.Context) -> Optional[dict]:
    """The pass managers kept for `ctx`, if it is this thread's reused context."""
    return _slot.pass_managers if ctx is _slot.context else None


def reset() -> None:
    """Drop this thread's context; the next compile makes a fresh one."""
    _slot.context, _slot.pass_managers = None, None
