"""The CPU target: loops lowered to LLVM, JIT-compiled in process."""

from .target import TARGET

__all__ = ["TARGET"]
