"""Where the CUDA tools are: ptxas and libdevice from NVIDIA's `nvidia-cuda-nvcc-cu12` wheel.

The wheel installs under the `nvidia` namespace package; a system toolkit (CUDA_HOME,
/usr/local/cuda, ptxas on PATH) is used when the wheel is absent.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
from typing import Optional


def _roots() -> list[str]:
    roots = []
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        roots.append(os.path.join(base, "cuda_nvcc"))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            roots.append(os.environ[env])
    roots.append("/usr/local/cuda")
    return roots


def ptxas() -> Optional[str]:
    """Path of ptxas, or None."""
    for root in _roots():
        path = os.path.join(root, "bin", "ptxas")
        if os.access(path, os.X_OK):
            return path
    return shutil.which("ptxas")


def libdevice() -> Optional[str]:
    """Path of libdevice.10.bc, or None."""
    for root in _roots():
        found = sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")))
        if found:
            return found[-1]
    return None
