"""Rewrite test/pytest/conformance_known_failures.txt from a fresh conformance run.

    python tools/known_failures.py [SUITES_DIR]     (default ../shared/conformance/stablehlo)

Run it after a lowering lands, and read the diff: lines should only disappear.
"""

import os
import sys

from mlxc.conformance import runner, suites

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "pytest", "conformance_known_failures.txt")
HEADER = """\
# Conformance cases mlxc does not pass yet, one id per line (then the outcome).
# test_conformance.py fails when a case not listed here fails, and when a listed case
# passes (remove it). Regenerate: python tools/known_failures.py
"""


def main() -> None:
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "conformance",
                                                              "stablehlo")
    cases = suites.discover(data)
    results = runner.run(cases, data, jobs=os.cpu_count() or 2)
    with open(OUT, "w") as f:
        f.write(HEADER)
        for r in results:
            if r.status not in ("pass", "out_of_scope"):
                detail = " ".join(r.detail.split())[:120]
                f.write(f"{r.id}  # {r.status}: {detail}\n")
    print(runner.report(cases, results, families=False, failures=0))


if __name__ == "__main__":
    main()
