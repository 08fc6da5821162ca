"""The one module that imports the MLIR/StableHLO bindings (the torch-mlir wheel).

Everything else in mlxc imports `ir`, `passmanager`, ... from here, so swapping the
binding package is a one-file change and the runtime package never pulls it in.
"""

from __future__ import annotations

import importlib
import threading
import types

from torch_mlir import execution_engine, ir, passmanager  # noqa: F401
from torch_mlir._mlir_libs import _mlir as _cext
from torch_mlir._mlir_libs import _stablehlo as stablehlo  # noqa: F401
# Three native modules imported directly rather than through their dialect packages,
# whose op classes mlxc does not use and which take about half a second to import
# (linalg's op DSL above all): a cold compile pays that.
from torch_mlir._mlir_libs import _mlirDialectsLinalg as linalg  # noqa: F401  (contraction/convolution queries)
from torch_mlir._mlir_libs import _mlirTransformInterpreter as _transform_interpreter
from torch_mlir._mlir_libs._mlirDialectsLLVM import translate_module_to_llvmir  # noqa: F401
# Op builders for the lowerings that emit structured control flow (mlxc.lowerings).
from torch_mlir.dialects import arith, scf, tensor  # noqa: F401

# `stablehlo-aggressive-simplification` is only registered once this extension is
# loaded; importing it here makes the pass available to every pipeline we parse.
from torch_mlir._mlir_libs import _torchMlir  # noqa: F401

# Wrapping an op in its Python class imports its dialect's package, found under the
# bindings' search prefixes (first match wins); mlxc._dialect_classes has lighter
# stand-ins (linalg's op classes without its op DSL, 0.15 s of a first compile).
if "mlxc._dialect_classes" not in _cext.globals.dialect_search_modules:
    _cext.globals.dialect_search_modules = (
        ["mlxc._dialect_classes"] + list(_cext.globals.dialect_search_modules))


def _location_attributes_stay_attributes() -> None:
    """A location used as an attribute value (`{jax.result_info = loc("w")}`: valid IR,
    and what a damaged file can hold) is downcast by the bindings with the caster of its
    location class, which takes only an `ir.Location`: reading such an attribute raised
    a TypeError inside C++ and terminated the process. The casters are shared by
    locations and attributes (one map by TypeID), so each is replaced by one that
    leaves attributes as plain `ir.Attribute`s and still downcasts locations."""
    for cls in (ir.NameLoc, ir.FileLineColLoc, ir.CallSiteLoc, ir.FusedLoc, ir.UnknownLoc):
        def cast(value, cls=cls):
            return cls(value) if isinstance(value, ir.Location) else value

        ir.register_type_caster(cls.static_typeid, replace=True)(cast)


_location_attributes_stay_attributes()


def load_linalg_op_classes() -> None:
    """Register linalg's generated op classes (for mlxc._dialect_classes.linalg), without
    the op DSL that importing the binding's linalg package also builds."""
    importlib.import_module("torch_mlir.dialects._linalg_ops_gen")


def _apply_named_sequence(payload_root, transform_root, transform_module) -> None:
    # Operations or modules, as the dialect package's wrapper accepts.
    _transform_interpreter.apply_named_sequence(
        payload_root.operation, transform_root.operation, transform_module.operation)


transform_interpreter = types.SimpleNamespace(apply_named_sequence=_apply_named_sequence)


_passes_registered = False
_register_lock = threading.Lock()


def _register_passes_once() -> None:
    global _passes_registered
    with _register_lock:
        if not _passes_registered:
            stablehlo.register_stablehlo_passes()
            _passes_registered = True


def new_context() -> ir.Context:
    """A fresh context with the upstream, StableHLO and CHLO dialects and passes.

    Contexts are not thread-safe and keep every uniqued constant alive: compiles
    share one per thread for a bounded number of compiles (mlxc.compile_context).
    """
    _register_passes_once()
    ctx = ir.Context()
    stablehlo.register_dialect(ctx)
    _load_chlo(ctx)
    return ctx


def _load_chlo(ctx: ir.Context) -> None:
    # The bindings register no CHLO dialect for parsing, but the library holds it:
    # stablehlo-complex-math-expander declares CHLO as a dependent dialect, so running
    # it once on an empty module loads CHLO into the context. After that, text from
    # `jax.jit(f).lower(x).as_text()` (chlo.erf, chlo.top_k, ...) parses, and
    # chlo-legalize-to-stablehlo rewrites it.
    with ctx, ir.Location.unknown():
        empty = ir.Module.create()
        passmanager.PassManager.parse(
            "builtin.module(func.func(stablehlo-complex-math-expander))").run(empty.operation)


def capi_library_path() -> str:
    """The bindings' shared library, which exports the MLIR C API (the JIT's
    mlirExecutionEngine* functions, called through ctypes by targets/cpu/parallel_jit.py)."""
    import os

    return os.path.join(os.path.dirname(_cext.__file__), "libTorchMLIRAggregateCAPI.so")


def bindings_version() -> str:
    """The version of the MLIR binding package, part of every cache key."""
    from importlib import metadata

    try:
        return "torch-mlir " + metadata.version("torch-mlir")
    except metadata.PackageNotFoundError:  # pragma: no cover - source checkouts
        return "torch-mlir unknown"
