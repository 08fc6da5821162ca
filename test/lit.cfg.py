# lit configuration for mlxc's IR tests.
#
#   lit test/            (or through pytest: test/pytest/test_lit.py)
#
# `.mlir` files are checked with mlxc-opt and FileCheck (the `filecheck` package);
# `.py` files are Python-driven tests run with %PYTHON.

import os
import shutil
import sys

import lit.formats

config.name = "mlxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
# pytest's numeric tests live beside the lit tests but are not lit tests.
config.excludes = ["pytest", "lit.cfg.py", "not.py", "Output", "__pycache__", "conftest.py"]

python = sys.executable
config.substitutions.append(("%PYTHON", python))


def tool(name, module):
    found = shutil.which(name, path=os.path.dirname(python) + os.pathsep + os.environ.get("PATH", ""))
    return found or f"{python} -m {module}"


config.substitutions.append(("mlxc-opt", tool("mlxc-opt", "mlxc.tools.opt")))
filecheck = shutil.which("filecheck", path=os.path.dirname(python) + os.pathsep + os.environ.get("PATH", ""))
if filecheck is None:
    lit_config.fatal("FileCheck not found: pip install filecheck (mlxc[test])")
config.substitutions.append(("FileCheck", filecheck))
config.substitutions.append(("not ", f"{python} {os.path.join(config.test_source_root, 'not.py')} "))

for var in ("PYTHONPATH", "HOME", "TMPDIR", "MLXC_RUNTIME_LIBRARY", "XDG_CACHE_HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# glibc fills freed memory with this byte, so a Python handle left pointing at an erased
# operation crashes every run instead of one run in six.
config.environment["MALLOC_PERTURB_"] = os.environ.get("MALLOC_PERTURB_", "165")
