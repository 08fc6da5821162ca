import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# Keep tests independent of a user's settings.
for var in ("MLXC_DUMP_DIR", "MLXC_OPT_LEVEL", "MLXC_CHECK_CONTRACTS", "MLXC_CACHE_DIR"):
    os.environ.pop(var, None)
# Each test compiles afresh; test_cache.py turns the compile cache on where it tests it.
os.environ["MLXC_CACHE"] = "0"

# glibc fills freed memory with this byte from now on (M_PERTURB), so a Python handle
# left pointing at an erased MLIR operation crashes its test every run instead of now
# and then. Subprocesses get it through the environment (read once at start).
os.environ.setdefault("MALLOC_PERTURB_", "165")
if sys.platform.startswith("linux"):
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-6, int(os.environ["MALLOC_PERTURB_"]))
    except (OSError, AttributeError):  # not glibc
        pass
