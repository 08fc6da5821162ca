"""mlxc's runtime: load and call compiled programs. Imports nothing of the compiler,
so artifacts run where only numpy and ml_dtypes are installed."""

from .artifact import ArtifactError, load
from .executable import Executable
from .signature import Signature, TensorSpec

__all__ = ["ArtifactError", "Executable", "Signature", "TensorSpec", "load"]
