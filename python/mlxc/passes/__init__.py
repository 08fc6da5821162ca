"""mlxc's own passes, written in Python, one per module, registered by name.

A pass module defines `PASS = PythonPass(...)`. The registry below maps each pass's
command-line name to its module and imports it only when the pass is used, so
`mlxc-opt` starts fast. Python passes run on `builtin.module` (the bindings cannot
nest a Python pass under another op), and report problems by raising
`mlxc.CompileError` with the offending op's location.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Callable

REGISTRY: dict[str, str] = {
    "mlxc-select-entry": "mlxc.passes.select_entry",
    "mlxc-record-signature": "mlxc.passes.record_signature",
    "mlxc-quantized-entry": "mlxc.passes.quantized_entry",
    "mlxc-signed-quantized-storage": "mlxc.passes.signed_quantized_storage",
    "mlxc-static-chlo-broadcasts": "mlxc.passes.static_chlo_broadcasts",
    "mlxc-specialize-arguments": "mlxc.passes.specialize_arguments",
    "mlxc-shape-assertions": "mlxc.passes.shape_assertions",
    "mlxc-static-real-dynamic-slice": "mlxc.passes.static_real_dynamic_slice",
    "mlxc-precise-chlo-math": "mlxc.passes.precise_chlo_math",
    "mlxc-small-top-k": "mlxc.passes.small_top_k",
    "mlxc-precise-expm1-log1p": "mlxc.passes.precise_expm1_log1p",
    "mlxc-approximate-math": "mlxc.passes.approximate_math",
    "mlxc-upcast-low-precision-dots": "mlxc.passes.upcast_low_precision_dots",
    "mlxc-conv-nhwc-layout": "mlxc.passes.conv_nhwc_layout",
    "mlxc-reduce-window-scans": "mlxc.passes.reduce_window_scans",
    "mlxc-blocked-transposes": "mlxc.passes.blocked_transposes",
    "mlxc-canonical-dot-general": "mlxc.passes.canonical_dot_general",
    "mlxc-dot-general-layout": "mlxc.passes.dot_general_layout",
    "mlxc-gather-loop-order": "mlxc.passes.gather_loop_order",
    "mlxc-strided-gathers": "mlxc.passes.strided_gathers",
    "mlxc-saturate-float-to-int": "mlxc.passes.saturate_float_to_int",
    "mlxc-lower-extra-ops": "mlxc.passes.lower_extra_ops",
    "mlxc-mark-inputs-readonly": "mlxc.passes.mark_inputs_readonly",
    "mlxc-distinct-result-buffers": "mlxc.passes.distinct_result_buffers",
    "mlxc-empty-buffer-arguments": "mlxc.passes.empty_buffer_arguments",
    "mlxc-bool-add-to-or": "mlxc.passes.bool_add_to_or",
    "mlxc-tensor-constants": "mlxc.passes.tensor_constants",
    "mlxc-shape-assumptions": "mlxc.passes.shape_assumptions",
    "mlxc-buffers-at-calls": "mlxc.passes.buffers_at_calls",
    "mlxc-feasible-materializations": "mlxc.passes.feasible_materializations",
    "mlxc-finite-without-infinity": "mlxc.passes.finite_without_infinity",
    "mlxc-complex-mul-fma": "mlxc.passes.complex_mul_fma",
    "mlxc-expand-small-float-casts": "mlxc.passes.expand_small_float_casts",
    "mlxc-keep-small-float-roundings": "mlxc.passes.keep_small_float_roundings",
    "mlxc-small-float-selects": "mlxc.passes.small_float_selects",
    "mlxc-small-float-moves": "mlxc.passes.small_float_moves",
    "mlxc-small-float-fma": "mlxc.passes.small_float_fma",
    "mlxc-verify-stage": "mlxc.passes.verify_stage",
    "mlxc-emit-entry-wrapper": "mlxc.passes.emit_entry_wrapper",
    "mlxc-fold-unit-extent-dims": "mlxc.passes.fold_unit_extent_dims",
    "mlxc-apply-cpu-schedules": "mlxc.passes.apply_cpu_schedules",
    "mlxc-record-temp-memory": "mlxc.passes.record_temp_memory",
    "mlxc-recompute-elementwise": "mlxc.passes.recompute_elementwise",
    "mlxc-extracts-as-inputs": "mlxc.passes.extracts_as_inputs",
    "mlxc-fuse-siblings": "mlxc.passes.fuse_siblings",
    "mlxc-contraction-reshape-barriers": "mlxc.passes.contraction_reshape_barriers",
    "mlxc-inits-as-inputs": "mlxc.passes.inits_as_inputs",
    "mlxc-elementwise-in-place": "mlxc.passes.elementwise_in_place",
    "mlxc-early-dealloc": "mlxc.passes.early_dealloc",
    "mlxc-constant-buffers": "mlxc.passes.constant_buffers",
    "mlxc-uncopied-loop-inputs": "mlxc.passes.uncopied_loop_inputs",
    "mlxc-hoist-loop-buffers": "mlxc.passes.hoist_loop_buffers",
    "mlxc-unshare-fills": "mlxc.passes.unshare_fills",
    "mlxc-accumulate-into-contraction": "mlxc.passes.accumulate_into_contraction",
    "mlxc-transposed-matmul-operands": "mlxc.passes.transposed_matmul_operands",
    "mlxc-pads-as-fills": "mlxc.passes.pads_as_fills",
    "mlxc-unpadded-convolutions": "mlxc.passes.unpadded_convolutions",
    "mlxc-temps-in-results": "mlxc.passes.temps_in_results",
    "mlxc-parallelize-tile-loops": "mlxc.passes.parallelize_tile_loops",
    "mlxc-inline-alloca-scopes": "mlxc.passes.inline_alloca_scopes",
    "mlxc-clone-into-parallel-regions": "mlxc.passes.clone_into_parallel_regions",
    "mlxc-fuse-row-loops": "mlxc.passes.fuse_row_loops",
    "mlxc-outline-layers": "mlxc.passes.outline_layers",
    "mlxc-outline-kernels": "mlxc.passes.outline_kernels",
    "mlxc-kernel-segments": "mlxc.passes.kernel_segments",
    "mlxc-extracts-through-reshapes": "mlxc.passes.extracts_through_reshapes",
    "mlxc-dedup-kernels": "mlxc.passes.dedup_kernels",
    "mlxc-library-matmuls": "mlxc.passes.library_matmuls",
    "mlxc-library-ffts": "mlxc.passes.library_ffts",
    "mlxc-library-sorts": "mlxc.passes.library_sorts",
    "mlxc-library-lapack": "mlxc.passes.library_lapack",
    "mlxc-rolled-loops": "mlxc.passes.rolled_loops",
    "mlxc-loop-annotations": "mlxc.passes.loop_annotations",
    "mlxc-library-convs": "mlxc.passes.library_convs",
    "mlxc-library-pools": "mlxc.passes.library_pools",
    # The cuda target's passes live with the target.
    "mlxc-gpu-contraction-operands": "mlxc.targets.cuda.passes.contraction_operands",
    "mlxc-gpu-tile-matmul": "mlxc.targets.cuda.passes.tile_matmul",
    "mlxc-gpu-split-reductions": "mlxc.targets.cuda.passes.split_reductions",
    "mlxc-gpu-copies-to-loops": "mlxc.targets.cuda.passes.copies_to_loops",
    "mlxc-gpu-wrap-sequential": "mlxc.targets.cuda.passes.wrap_sequential",
    "mlxc-gpu-sink-into-loops": "mlxc.targets.cuda.passes.sink_into_loops",
    "mlxc-gpu-map-loops": "mlxc.targets.cuda.passes.map_loops",
}


@dataclass(frozen=True)
class PythonPass:
    argument: str
    summary: str
    run: Callable[..., None]  # run(module_op, **options)
    options: dict[str, str] = field(default_factory=dict)  # option -> description
    defaults: dict[str, str] = field(default_factory=dict)

    def bind(self, options: tuple) -> Callable:
        """The callable PassManager.add expects, with options parsed and checked."""
        kwargs = dict(self.defaults)
        for key, value in options:
            if key not in self.options:
                known = ", ".join(self.options) or "none"
                raise ValueError(f"pass '{self.argument}' has no option '{key}' (options: {known})")
            kwargs[key.replace("-", "_")] = "true" if value is None else value
        kwargs = {k.replace("-", "_"): v for k, v in kwargs.items()}
        missing = [name for name, param in inspect.signature(self.run).parameters.items()
                   if param.default is inspect.Parameter.empty and name != "module"
                   and name not in kwargs]
        if missing:
            raise ValueError(f"pass '{self.argument}' needs option(s): "
                             + ", ".join(m.replace("_", "-") for m in missing))

        def run(op, _pass):
            self.run(op, **kwargs)

        run.__name__ = self.argument
        return run


def is_python_pass(name: str) -> bool:
    return name in REGISTRY


def lookup(name: str) -> PythonPass:
    try:
        module = REGISTRY[name]
    except KeyError:
        raise KeyError(f"no mlxc pass named '{name}'") from None
    return importlib.import_module(module).PASS


def all_passes() -> list[PythonPass]:
    return [lookup(name) for name in sorted(REGISTRY)]
