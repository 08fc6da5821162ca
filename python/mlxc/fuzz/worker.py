"""A fuzz worker process: `python -m mlxc.fuzz.worker` answers fuzz cases (JSON lines
on stdin) with results, through the conformance worker's loop."""

from __future__ import annotations

import os
import sys


def main() -> int:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from ..conformance.worker import serve
    from .execute import FuzzCase, enable_x64, run_case

    enable_x64()
    return serve(lambda data: run_case(FuzzCase(**data)))


if __name__ == "__main__":
    sys.exit(main())
