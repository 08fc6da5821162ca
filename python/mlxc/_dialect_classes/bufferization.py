"""The bufferization dialect without Python op classes (see llvm.py): mlxc reads its ops by name
and attributes only, and the binding package's module for it costs the first compile
that wraps one of its ops (`block.operations`) an import (math: some 9 ms)."""
