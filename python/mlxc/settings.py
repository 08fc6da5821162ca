"""Every MLXC_* setting, in one place.

Each setting is read from its environment variable when it is used (not at import),
so a test or a user can change it between compiles, and can be overridden for a
block of code without touching the environment:

    with mlxc.settings.override(dump_dir="/tmp/ir"):
        mlxc.compile(src)

`mlxc settings` prints this table with the current values.

This module imports nothing of the compiler: the runtime package reads it too.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Iterator


def _path(raw: str, env: str) -> str:
    return os.path.expanduser(raw)


def _user_cache_dir() -> str:
    # The platform's per-user cache folder: XDG on Linux, ~/Library/Caches on macOS.
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    elif os.uname().sysname == "Darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "mlxc")


def _bool(raw: str, env: str) -> bool:
    low = raw.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{env}={raw!r}: expected 0 or 1")


def _int_in(lo: int, hi: int) -> Callable[[str, str], int]:
    def parse(raw: str, env: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise ValueError(f"{env}={raw!r}: expected an integer from {lo} to {hi}")
        return value

    return parse


@dataclass(frozen=True)
class Setting:
    name: str
    env: str
    parse: Callable[[str, str], Any]
    default: Any
    doc: str

    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default


_ALL = [
    Setting("dump_dir", "MLXC_DUMP_DIR", _path, None,
            "write each stage's IR into this folder as numbered .mlir files"),
    Setting("repro_dir", "MLXC_REPRO_DIR", _path,
            lambda: os.path.join(tempfile.gettempdir(), "mlxc-repro"),
            "where the input of a failing pass is saved for mlxc-opt"),
    Setting("opt_level", "MLXC_OPT_LEVEL", _int_in(0, 3), 1,
            "LLVM optimisation level for generated code (1: the loops come tiled and "
            "vectorized, and 2 cost a fifth more compile time for no run time on the "
            "benchmarks)"),
    Setting("check_contracts", "MLXC_CHECK_CONTRACTS", _bool, True,
            "check the contract that ends each pipeline stage"),
    Setting("runtime_library", "MLXC_RUNTIME_LIBRARY", _path, None,
            "use this native runtime library instead of the installed one"),
    Setting("cpu_schedules", "MLXC_CPU_SCHEDULES", _bool, True,
            "tile and vectorize linalg ops for the host CPU (0: plain loops, for comparison)"),
    Setting("library_calls", "MLXC_LIBRARY_CALLS", _bool, True,
            "f32 matrix products with nothing fused into them, f32 NHWC convolutions "
            "(dense and depthwise, reading the unpadded input) and f32 max and sum poolings "
            "(skipping their padding) call the runtime's kernels instead of being compiled "
            "(0: generate their code, for comparison)"),
    Setting("approx_math", "MLXC_APPROX_MATH", _bool, True,
            "f32 exp/log/tanh/erf as inline polynomials, as XLA computes them (0: libm calls)"),
    Setting("unpadded_convs", "MLXC_UNPADDED_CONVS", _bool, False,
            "zero-padded convolutions read their input in place, split into interior, edge and "
            "corner parts (no padded copy: less temporary memory, ~4x the compile time)"),
    Setting("threads", "MLXC_THREADS", _int_in(1, 256), lambda: os.cpu_count() or 1,
            "threads a program may use, the caller included (1: no thread pool, no parallel code)"),
    Setting("compile_threads", "MLXC_COMPILE_THREADS", _int_in(1, 2),
            lambda: 2 if (os.cpu_count() or 1) >= 2 else 1,
            "threads LLVM code generation may use: 2 (the default from 2 cores up) outlines a "
            "large program's loop nests into kernels, parted into a few modules that this "
            "thread (after the entry's) and a second one compile as each comes free, while "
            "no more threads are runnable than leave a core free (a 2-layer GPT training "
            "step: 5.6 -> 4.2 s on 2 idle cores); 1: one thread, one function"),
    Setting("parse_timeout", "MLXC_PARSE_TIMEOUT", _int_in(1, 3600), 60,
            "seconds that reading a program's MLIR bytecode or portable artifact (in a checking "
            "process: a damaged file can hang or crash the reader) may take per MiB, at least "
            "this long"),
    Setting("outline_layers", "MLXC_OUTLINE_LAYERS", _bool, True,
            "runs of StableHLO ops that repeat (a model's layers) become one function called "
            "for each, so the stages after the import and LLVM compile one layer, not every "
            "copy (0: every copy compiled, fused across layer boundaries, for comparison)"),
    Setting("dedup_kernels", "MLXC_DEDUP_KERNELS", _bool, True,
            "loop nests identical up to their buffers (a model's repeated layers) are compiled "
            "once, as one kernel function called for each (0: each compiled where it is, for "
            "comparison)"),
    Setting("timing", "MLXC_TIMING", _bool, False,
            "print where each compile's time went on stderr: per stage, per pass (each pass "
            "then runs in a pass manager of its own) and per step of LLVM code generation; "
            "exe.compile_stats() returns the same rows"),
    Setting("progress", "MLXC_PROGRESS", _int_in(0, 3600), 2,
            "seconds into a compile after which each stage reports on stderr (and to the "
            "'mlxc' logger) as it ends, so that a long compile is seen to progress; 0: from "
            "the start"),
    Setting("cache", "MLXC_CACHE", _bool, True,
            "keep compiled programs on disk and reuse them (0 turns the compile cache off)"),
    Setting("cache_dir", "MLXC_CACHE_DIR", _path, lambda: _user_cache_dir(),
            "where the compile cache lives"),
]

SETTINGS: dict[str, Setting] = {s.name: s for s in _ALL}

_overrides: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "mlxc_settings_overrides", default={})


def get(name: str) -> Any:
    """The current value of setting `name`: an override, else the environment, else the default."""
    overrides = _overrides.get()
    if name in overrides:
        return overrides[name]
    setting = SETTINGS[name]
    raw = os.environ.get(setting.env)
    if raw is None or raw == "":
        return setting.default_value()
    return setting.parse(raw, setting.env)


@contextlib.contextmanager
def override(**values: Any) -> Iterator[None]:
    """Override settings by name for the duration of a `with` block (this thread only)."""
    unknown = sorted(set(values) - set(SETTINGS))
    if unknown:
        raise KeyError(f"unknown mlxc setting(s): {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    token = _overrides.set({**_overrides.get(), **values})
    try:
        yield
    finally:
        _overrides.reset(token)


def table() -> list[tuple[str, str, str]]:
    """(environment variable, current value, description) for every setting."""
    rows = []
    for s in _ALL:
        try:
            value = repr(get(s.name))
        except ValueError as e:
            value = f"<invalid: {e}>"
        rows.append((s.env, value, s.doc))
    return rows
