import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# Keep tests independent of a user's settings.
for var in ("MLXC_DUMP_DIR", "MLXC_OPT_LEVEL", "MLXC_CHECK_CONTRACTS", "MLXC_CACHE_DIR"):
    os.environ.pop(var, None)
# Each test compiles afresh; test_cache.py turns the compile cache on where it tests it.
os.environ["MLXC_CACHE"] = "0"
