"""Run testdata conformance cases through today's XLA (jax's CPU backend) and judge
XLA's results with each case's own check, as mlxc's are judged.

    python tools/xla_on_cases.py [CASE.mlir ...]
        (default: the testdata cases in test/pytest/conformance_known_failures.txt)

The expected values in testdata/ were produced by some XLA build; where today's XLA
fails a case too, the case asks for that build's rounding, not for the right answer.
jax is a test dependency, never the compiler's: this is a tool, not part of mlxc.
"""

import os
import re
import sys

import numpy as np

# The cases hold their inputs as constants: without this XLA folds the whole program at
# compile time with its evaluator (libm math), and the verdict would not be about the
# code XLA generates for the CPU.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_disable_hlo_passes=constant_folding").strip()

from jax.extend import backend  # noqa: E402  (after XLA_FLAGS)
from jax._src.lib import xla_client  # noqa: E402

from mlxc.conformance import checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITES = os.path.join(os.path.dirname(ROOT), "shared", "conformance", "stablehlo")
KNOWN = os.path.join(ROOT, "test", "pytest", "conformance_known_failures.txt")
KINDS = {"expect_close": "close", "expect_almost_eq": "almost_eq", "expect_eq": "eq"}


def _run(backend_, text: str) -> np.ndarray:
    devices = xla_client.DeviceList(tuple(backend_.local_devices()[:1]))
    exe = backend_.compile_and_load(text, devices, xla_client.CompileOptions())
    return np.asarray(exe.execute([])[0])


def judge(path: str, backend_) -> str:
    text = open(path).read()
    check = re.search(r"@check\.(expect_\w+)\((%[\w#]+), (%[\w#]+)\)(.*)", text)
    if not check or check.group(1) not in KINDS:
        return "no single expect_* check: skipped"
    options = {}
    if m := re.search(r"tolerance = ([0-9.e+-]+)", check.group(4)):
        options["tolerance"] = float(m.group(1))
    if m := re.search(r"max_ulp_difference = (\d+)", check.group(4)):
        options["max_ulp"] = int(m.group(1))
    body = "\n".join(line for line in text.splitlines()
                     if "@check." not in line and not line.startswith("//"))
    # The same module with @expected as its public main gives the expected values.
    expected_body = (body.replace("@main(", "@main_orig(")
                     .replace("func.func public @main_orig(", "func.func private @main_orig(")
                     .replace("@expected(", "@main(")
                     .replace("func.func private @main(", "func.func public @main("))
    actual = _run(backend_, body)
    expected = _run(backend_, expected_body)
    return checks.compare(checks.Check(KINDS[check.group(1)], **options), actual, expected) \
        or "pass"


def main(argv) -> int:
    paths = argv or [os.path.join(SUITES, line.split()[0]) for line in open(KNOWN)
                     if line.startswith("testdata/") and "/dynamic/" not in line.split()[0]]
    backend_ = backend.get_backend("cpu")
    for path in paths:
        try:
            verdict = judge(path, backend_)
        except Exception as e:  # one case XLA rejects does not stop the others
            verdict = f"XLA error: {str(e).splitlines()[0][:150]}"
        print(f"{os.path.basename(path)}: XLA {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
