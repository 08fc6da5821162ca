"""ONNX models as StableHLO, through torch-mlir's ONNX importer.

`mlxc.compile("model.onnx")`: onnx's shape inference types every value (the importer
needs the types), torch-mlir imports the graph into its torch dialect as `onnx.*`
operators, lowers them to torch ops (torch-onnx-to-torch-backend-pipeline) and those
to StableHLO (torch-backend-to-stablehlo-backend-pipeline). The graph's function
(`@main_graph`) becomes `@main`, the entry `mlxc.compile` looks for by default.
Needs the `onnx` package (not a dependency of mlxc: pip install onnx).
"""

from __future__ import annotations

from ..errors import CompileError, Diagnostic


def to_stablehlo(path: str, name: str) -> str:
    """The StableHLO text of the ONNX model at `path`; CompileError if it cannot be."""
    try:
        import onnx
    except ImportError:
        raise CompileError(f"{name}: an ONNX model needs the onnx package (pip install onnx)",
                           [Diagnostic("error", name, "onnx is not installed")]) from None
    from torch_mlir import ir as tm_ir
    from torch_mlir.compiler_utils import TorchMlirCompilerError, run_pipeline_with_repro_report
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras import onnx_importer

    try:
        model = onnx.load(path)
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as e:  # a damaged or non-ONNX file: protobuf's own error
        raise CompileError(f"{name}: cannot read the ONNX model",
                           [Diagnostic("error", name, f"{type(e).__name__}: {e}")]) from None
    context = tm_ir.Context()
    torch_d.register_dialect(context)
    try:
        info = onnx_importer.ModelInfo(model)
        module = info.create_module(context=context).operation
        onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
        for pipeline, what in (("torch-onnx-to-torch-backend-pipeline", "ONNX to torch"),
                               ("torch-backend-to-stablehlo-backend-pipeline",
                                "torch to StableHLO")):
            run_pipeline_with_repro_report(module, f"builtin.module({pipeline})", what)
    except TorchMlirCompilerError as e:
        lines = [l for l in str(e).splitlines() if "error:" in l] or [str(e).strip()]
        raise CompileError(f"{name}: torch-mlir cannot import the ONNX model",
                           [Diagnostic("error", name, l.strip()) for l in lines[:5]]) from None
    except Exception as e:
        raise CompileError(f"{name}: torch-mlir cannot import the ONNX model",
                           [Diagnostic("error", name, f"{type(e).__name__}: {e}")]) from None
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and \
                tm_ir.StringAttr(op.attributes["sym_name"]).value == "main_graph":
            op.attributes["sym_name"] = tm_ir.StringAttr.get("main", context)
    return str(module)
