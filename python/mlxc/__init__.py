"""mlxc: a StableHLO compiler built on MLIR, driven from Python.

    exe = mlxc.compile(jax.export.export(jax.jit(f))(*args).mlir_module())
    y = exe(x)

`mlxc.pipeline()` is the pass pipeline `compile` runs; `mlxc.lower(src,
stop_after="linalg")` returns the IR at any stage; MLXC_DUMP_DIR dumps every stage.
"""

__version__ = "0.1.0"

from . import settings
from .runtime import ArtifactError, Executable, Signature, TensorSpec, load
from .runtime.cuda import devices

# The compiler (and with it the MLIR bindings) is imported on first use, so that
# `mlxc.load` runs artifacts where only numpy and ml_dtypes are installed.
_COMPILER = {"compile": "compiler", "lower": "compiler", "pipeline": "compiler",
             "CompileError": "errors", "Diagnostic": "errors"}


def __getattr__(name: str):
    if name in _COMPILER:
        import importlib

        value = getattr(importlib.import_module(f".{_COMPILER[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlxc' has no attribute '{name}'")


__all__ = ["compile", "lower", "pipeline", "load", "CompileError", "Diagnostic", "ArtifactError",
           "Executable", "Signature", "TensorSpec", "devices", "settings", "__version__"]
