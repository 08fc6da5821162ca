"""Run conformance cases in worker processes, so one crash or hang fails one case.

Each worker (`python -m mlxc.conformance.worker ROOT`) takes case ids on stdin and
answers one JSON line per case. A worker that dies (the MLIR bindings abort on some
inputs) or overruns the time limit is replaced, and its case is recorded as a crash
or a timeout; the run goes on.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Optional

from .execute import CRASH, OUT_OF_SCOPE, PASS, TIMEOUT, Result
from .suites import Case


WORKER = [sys.executable, "-m", "mlxc.conformance.worker"]


class _Worker:
    def __init__(self, root: str, command: list[str]):
        self.log = tempfile.TemporaryFile()
        # Each case compiles once: caching thousands of one-off programs only fills the disk.
        env = dict(os.environ, PYTHONUNBUFFERED="1", MLXC_CACHE="0")
        self.proc = subprocess.Popen(command + [root],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env)
        self.case: Optional[Case] = None
        self.started = 0.0
        self.buffer = b""

    def send(self, case: Case) -> None:
        self.case = case
        self.started = time.monotonic()
        self.proc.stdin.write((json.dumps(asdict(case)) + "\n").encode())
        self.proc.stdin.flush()

    def read_line(self) -> Optional[bytes]:
        """A complete line if one arrived; b'' at end of file; None otherwise."""
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return b""
        self.buffer += chunk
        if b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            return line
        return None

    def stderr_tail(self, limit: int = 300) -> str:
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - 4000))
        text = self.log.read().decode(errors="replace").strip().splitlines()
        interesting = [l for l in text if l.strip()][-3:]
        return " | ".join(interesting)[-limit:]

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=10)
        except Exception:
            pass
        self.log.close()


def run(cases: list[Case], root: str, jobs: int = 2, timeout: float = 120.0,
        progress: Optional[Callable[[Result], None]] = None,
        worker: Optional[list[str]] = None) -> list[Result]:
    """Results for `cases`, in their order; out-of-scope cases are not run.

    `worker` is the command of a worker process (default: mlxc's own, WORKER)."""
    command = worker or WORKER
    results: dict[str, Result] = {}
    todo = []
    for c in cases:
        if c.out_of_scope:
            results[c.id] = Result(c.id, OUT_OF_SCOPE, c.out_of_scope)
        else:
            todo.append(c)
    todo.reverse()  # pop() from the end keeps the original order
    workers = [_Worker(root, command) for _ in range(max(1, min(jobs, len(todo))))] if todo else []
    idle = list(workers)

    def finish(w: _Worker, result: Result) -> None:
        results[result.id] = result
        w.case = None
        if progress:
            progress(result)

    try:
        while todo or any(w.case for w in workers):
            while idle and todo:
                w = idle.pop()
                w.send(todo.pop())
            busy = [w for w in workers if w.case]
            ready, _, _ = select.select([w.proc.stdout for w in busy], [], [], 1.0)
            now = time.monotonic()
            for w in list(busy):
                if w.proc.stdout in ready:
                    line = w.read_line()
                    if line is None:
                        continue
                    if line:
                        data = json.loads(line)
                        finish(w, Result(**data))
                        idle.append(w)
                        continue
                    # End of file: the worker died while running its case.
                    w.proc.wait()
                    code = w.proc.returncode
                    why = f"signal {-code}" if code < 0 else f"exit {code}"
                    detail = f"worker died ({why}): {w.stderr_tail()}"
                    finish(w, Result(w.case.id, CRASH, detail, now - w.started))
                elif now - w.started > timeout:
                    finish(w, Result(w.case.id, TIMEOUT, f"no result after {timeout:.0f} s",
                                     now - w.started))
                else:
                    continue
                w.kill()
                fresh = _Worker(root, command)
                workers[workers.index(w)] = fresh
                idle.append(fresh)
    finally:
        for w in workers:
            try:
                w.proc.stdin.close()
            except Exception:
                pass
            w.kill()
    return [results[c.id] for c in cases]


@dataclass
class Tally:
    passed: int = 0
    total: int = 0  # in scope
    out_of_scope: int = 0
    statuses: Counter = field(default_factory=Counter)

    def add(self, r: Result) -> None:
        if r.status == OUT_OF_SCOPE:
            self.out_of_scope += 1
            return
        self.total += 1
        self.statuses[r.status] += 1
        if r.status == PASS:
            self.passed += 1

    @property
    def rate(self) -> float:
        return 100.0 * self.passed / self.total if self.total else 100.0


def summarize(cases: Iterable[Case], results: Iterable[Result]):
    """(per-suite tallies, per-(suite, family) tallies)."""
    suites: dict[str, Tally] = defaultdict(Tally)
    families: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for c, r in zip(cases, results):
        suites[c.suite].add(r)
        families[(c.suite, c.family)].add(r)
    return suites, families


def report(cases: list[Case], results: list[Result], *, families: bool = True,
           failures: int = 50) -> str:
    suites, fams = summarize(cases, results)
    lines = []
    if families:
        lines.append(f"{'suite/family':44} {'pass':>6} {'total':>6} {'rate':>7}  other outcomes")
        for (suite, family), t in sorted(fams.items()):
            if not t.total:
                continue
            other = ", ".join(f"{k} {v}" for k, v in t.statuses.items() if k != PASS)
            lines.append(f"{suite + '/' + family:44} {t.passed:6} {t.total:6} {t.rate:6.1f}%  {other}")
        lines.append("")
    lines.append(f"{'suite':14} {'pass':>6} {'in scope':>9} {'rate':>7} {'out of scope':>13}  other outcomes")
    grand = Tally()
    for suite, t in sorted(suites.items()):
        other = ", ".join(f"{k} {v}" for k, v in sorted(t.statuses.items()) if k != PASS)
        lines.append(f"{suite:14} {t.passed:6} {t.total:9} {t.rate:6.1f}% {t.out_of_scope:13}  {other}")
        grand.passed += t.passed
        grand.total += t.total
        grand.out_of_scope += t.out_of_scope
    lines.append(f"{'all':14} {grand.passed:6} {grand.total:9} {grand.rate:6.1f}% {grand.out_of_scope:13}")
    bad = [r for r in results if r.status not in (PASS, OUT_OF_SCOPE)]
    if bad and failures:
        lines.append("")
        lines.append(f"failures ({len(bad)}{', first ' + str(failures) if len(bad) > failures else ''}):")
        for r in bad[:failures]:
            lines.append(f"  {r.status:13} {r.id}: {r.detail[:300]}")
    return "\n".join(lines)
