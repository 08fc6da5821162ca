"""mlxc: a StableHLO compiler built on MLIR, driven from Python.

    exe = mlxc.compile(jax.export.export(jax.jit(f))(*args).mlir_module())
    y = exe(x)

`mlxc.pipeline()` is the pass pipeline `compile` runs; `mlxc.lower(src,
stop_after="linalg")` returns the IR at any stage; MLXC_DUMP_DIR dumps every stage.
"""

__version__ = "0.1.0"

from . import settings
from .errors import CompileError, Diagnostic
from .runtime import Executable, Signature, TensorSpec
from .runtime.cuda import devices
from .compiler import compile, lower, pipeline

__all__ = ["compile", "lower", "pipeline", "CompileError", "Diagnostic", "Executable",
           "Signature", "TensorSpec", "devices", "settings", "__version__"]
