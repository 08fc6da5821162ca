import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# Keep tests independent of a user's settings.
for var in ("MLXC_DUMP_DIR", "MLXC_OPT_LEVEL", "MLXC_CHECK_CONTRACTS"):
    os.environ.pop(var, None)
