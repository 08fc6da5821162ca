"""mlxc: a StableHLO compiler built on MLIR, driven from Python.

    f = mlxc.jit(f)        # a JAX function, traced by JAX, compiled by mlxc
    y = f(x)
    exe = mlxc.compile(jax.export.export(jax.jit(f))(*args).mlir_module())
    y = exe(x)

`mlxc.pipeline()` is the pass pipeline `compile` runs; `mlxc.lower(src,
stop_after="linalg")` returns the IR at any stage; MLXC_DUMP_DIR dumps every stage.
"""

__version__ = "0.1.0"

from . import settings
from .runtime import ArtifactError, Executable, Signature, TensorSpec, load
from .runtime.cuda import devices
from .runtime.host_arrays import device_put
from . import jax_jit
from .jax_jit import jit

# The compiler (and with it the MLIR bindings) is imported on first use, so that
# `mlxc.load` runs artifacts where only numpy and ml_dtypes are installed.
_COMPILER = {"lower": "compiler", "pipeline": "compiler", "fusion_report": "compiler",
             "fusion_groups": "compiler",
             "CompileError": "errors", "Diagnostic": "errors"}


def compile(source, target: str = "cpu", entry: str = "main", **kwargs):
    """Compile a StableHLO program and return a callable executable (`mlxc.compiler.compile`).

    A program compiled before, here or by another process, comes from the compile cache
    (MLXC_CACHE, MLXC_CACHE_DIR) without importing the compiler. A target triple such
    as `target="aarch64-linux-gnu"` compiles CPU code for that machine: an object file
    to `save()` (the same as `target_triple=`).
    """
    from . import cache

    source = jax_jit.program_of(source)
    if "-" in target:  # target names have no dash; triples always have one
        kwargs.setdefault("target_triple", target)
        target = "cpu"

    options = {k: v for k, v in kwargs.items() if k not in ("name", "start_after")}
    hit = cache.lookup(cache.key(source, target, entry, kwargs.get("start_after"), options))
    if hit is not None:
        return hit
    from . import compiler

    return compiler.compile(source, target, entry, **kwargs)


def __getattr__(name: str):
    if name in _COMPILER:
        import importlib

        value = getattr(importlib.import_module(f".{_COMPILER[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlxc' has no attribute '{name}'")


__all__ = ["compile", "jit", "device_put", "lower", "pipeline", "fusion_report", "fusion_groups", "load", "CompileError", "Diagnostic", "ArtifactError",
           "Executable", "Signature", "TensorSpec", "devices", "settings", "__version__"]
