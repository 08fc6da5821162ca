"""Find and open mlxc's native runtime library (built by CMake at install time)."""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from .. import settings

_LIB_NAMES = {"linux": "libmlxc_runtime.so", "darwin": "libmlxc_runtime.dylib",
              "win32": "mlxc_runtime.dll"}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def library_path() -> str:
    """Path of the runtime library: MLXC_RUNTIME_LIBRARY, else the installed one."""
    override = settings.get("runtime_library")
    if override:
        return override
    name = _LIB_NAMES.get(sys.platform, "libmlxc_runtime.so")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def source_dir() -> str | None:
    """The runtime's C sources, which artifacts are linked with: installed beside this
    package by `pip install`, or the repository's runtime/ folder in a source checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.path.join(here, "src"), os.path.join(here, "..", "..", "..", "runtime")):
        folder = os.path.normpath(folder)
        if os.path.isfile(os.path.join(folder, "mlxc_artifact.h")) and \
                any(name.endswith(".c") for name in os.listdir(folder)):
            return folder
    return None


def load() -> ctypes.CDLL:
    """The runtime library, opened once per process."""
    global _lib
    with _lock:
        if _lib is None:
            path = library_path()
            if not os.path.isfile(path):
                raise RuntimeError(
                    f"mlxc's native runtime library is missing ({path}); reinstall mlxc with "
                    "`pip install .` so CMake builds it, or point MLXC_RUNTIME_LIBRARY at it")
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            lib.mlxc_call_packed.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            lib.mlxc_call_packed.restype = None
            lib.mlxc_call_checked.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
            lib.mlxc_call_checked.restype = ctypes.c_size_t
            lib.mlxc_runtime_version.restype = ctypes.c_char_p
            _lib = lib
        return _lib
