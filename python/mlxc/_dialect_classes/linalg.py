"""linalg's generated op classes, without the op DSL of the binding's linalg package.

That package also builds every named op of its OpDSL at import (0.15 s on an idle
machine, most of what a first compile spent importing); mlxc never builds linalg ops
from Python, and the op classes an op is wrapped in are these same generated ones.
"""

from .._mlir import load_linalg_op_classes

load_linalg_op_classes()
