"""Pass pipelines as data: stages, passes, their textual form, and the runner."""

from .model import Pass, Pipeline, Stage, mlir_pass, nested, render
from .textual import PipelineSyntaxError, parse_pipeline

__all__ = ["Pass", "Pipeline", "Stage", "mlir_pass", "nested", "render", "parse_pipeline",
           "PipelineSyntaxError"]
