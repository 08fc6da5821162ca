"""A conformance worker: reads cases (JSON lines) on stdin, answers one result line each.

Results go to the original stdout; everything else the process prints (MLIR
diagnostics, LLVM messages) is sent to stderr so it cannot corrupt the protocol.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    root = sys.argv[1]
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from .execute import run_case
    from .suites import Case

    for line in sys.stdin:
        if not line.strip():
            continue
        case = Case(**json.loads(line))
        result = run_case(case, root)
        results.write(json.dumps(result.to_json()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
