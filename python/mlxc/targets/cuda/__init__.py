"""The CUDA target: kernels for NVIDIA GPUs as PTX, launched through the CUDA driver."""

from .target import TARGET

__all__ = ["TARGET"]
