"""A conformance worker: reads cases (JSON lines) on stdin, answers one result line each.

Results go to the original stdout; everything else the process prints (MLIR
diagnostics, LLVM messages) is sent to stderr so it cannot corrupt the protocol.
`serve` is the loop; the fuzzer's worker (`mlxc.fuzz.worker`) runs it too.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Callable


def serve(handle: Callable[[dict], object]) -> int:
    """Answer each JSON line of stdin with `handle(case).to_json()`, one line each."""
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        result = handle(json.loads(line))
        results.write(json.dumps(result.to_json()) + "\n")
    return 0


def main() -> int:
    root = sys.argv[1]
    from .execute import run_case
    from .suites import Case

    return serve(lambda data: run_case(Case(**data), root))


if __name__ == "__main__":
    sys.exit(main())
