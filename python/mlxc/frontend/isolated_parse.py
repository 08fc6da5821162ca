"""Read untrusted MLIR bytecode in a child process first, where a crash cannot reach the caller.

MLIR's bytecode reader (and StableHLO's portable-artifact reader on top of it) trusts
its input: single flipped bits in a file make it loop forever, abort (`LLVM ERROR:
SmallVector unable to grow`), free memory twice or dereference garbage. Text goes
through the ordinary parser, which reports every malformed input as a diagnostic,
but bytecode that the caller hands mlxc (bytes, a file) is first parsed, verified
and checked for non-UTF-8 strings by `python -m mlxc.frontend.isolated_parse`, a
worker process kept for the life of this one, under a time limit
(MLXC_PARSE_TIMEOUT). Only when the worker accepts the bytes does this process
parse them itself: parsing is deterministic, so the same bytes parse the same way.
A worker that dies or times out makes a `CompileError` naming the signal or the
limit; it is restarted once before blaming the input, in case an earlier input left
it damaged.

Trusted, and parsed directly: bytecode mlxc itself writes in this process (an
`ir.Module` handed to `mlxc.compile` is copied through bytecode; a program with `?`
dimensions keeps its own) and bytes that already passed the check in this process
(recognised by their SHA-256). Compiled programs in the compile cache are not
bytecode: they are shared libraries, checked against their checksum before loading.

The round trip costs a copy through a pipe and a second parse: 3-15 ms for the
benchmark programs, 0.1-0.2 s for 16 MiB of constants (`python bench/parse_check.py`).
Starting the worker, once per process, costs what importing the bindings costs (1-3 s
on a busy machine), paid by the first bytecode compile and not counted in the time
limit. Checks run one at a time.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Optional

from .. import settings
from ..errors import CompileError, Diagnostic

# The worker: this module run as a script (tests put a failing stand-in here).
WORKER_COMMAND = [sys.executable, "-m", "mlxc.frontend.isolated_parse"]

_READY = b"ready\n"  # the worker's first line, once it can parse
_START_TIMEOUT = 600.0

_lock = threading.Lock()
_worker: Optional["_Worker"] = None
_accepted: dict[bytes, None] = {}  # digests of bytes that passed, oldest first
_MAX_ACCEPTED = 256
_exit_hook: list = []  # shutdown registered with atexit (once)


class _Died(Exception):
    """The worker exited (crashed) or ran out of time on a request."""

    def __init__(self, what: str, stderr: str, starting: bool = False):
        super().__init__(what)
        self.what = what
        self.stderr = stderr
        self.starting = starting  # before it could read anything: not the input's fault


class _Worker:
    def __init__(self):
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [package_root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(WORKER_COMMAND,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)
        self.started = False

    def request(self, data: bytes, name: str, timeout: float) -> dict:
        if not self.started:
            # Starting (importing the bindings) is not part of the time limit: on a busy
            # machine it alone can take longer than a parse is allowed.
            try:
                first = self._readline(_START_TIMEOUT, "took longer than {:g} s to start")
            except _Died as died:
                raise _Died(died.what, died.stderr, starting=True) from None
            if first != _READY:
                raise _Died(f"wrote {first[:80]!r} instead of starting", "", starting=True)
            self.started = True
        try:
            self.proc.stdin.write(json.dumps({"name": name, "size": len(data)}).encode() + b"\n")
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: the reply is empty
        return json.loads(self._readline(timeout, "took longer than {:g} s"))

    def _readline(self, timeout: float, late: str) -> bytes:
        """The worker's next line; _Died when it exits or is late (then it is killed)."""
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self.close()
            reader.join()
            raise _Died(late.format(timeout), "")
        if not line or not line[0]:
            self.proc.wait()
            raise _Died(_exit_reason(self.proc.returncode), self._stderr_tail())
        return line[0]

    def _stderr_tail(self) -> str:
        try:
            self.stderr.seek(0)
            lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass


def _exit_reason(code: Optional[int]) -> str:
    if code is not None and code < 0:
        try:
            return f"crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"crashed (signal {-code})"
    return f"exited with status {code}"


def _timeout(size: int) -> float:
    return settings.get("parse_timeout") * max(1.0, size / (1 << 20))


def check(data: bytes, name: str, what: str) -> None:
    """Return when `data` (`what`: MLIR bytecode or a portable artifact) parses and
    verifies in a child process; raise the CompileError it would make, or one naming
    the crash."""
    digest = hashlib.sha256(data).digest()
    with _lock:
        if digest in _accepted:
            return
        reply = _ask(data, name, what)
        if reply["ok"]:
            _accepted[digest] = None
            while len(_accepted) > _MAX_ACCEPTED:
                del _accepted[next(iter(_accepted))]
            return
    raise CompileError(reply["summary"], [_diagnostic(d) for d in reply["diagnostics"]])


def _ask(data: bytes, name: str, what: str) -> dict:
    global _worker
    for attempt in (1, 2):  # a worker an earlier input damaged gets one fresh start
        if _worker is None:
            if not _exit_hook:
                _exit_hook.append(atexit.register(shutdown))
            _worker = _Worker()
        try:
            return _worker.request(data, name, _timeout(len(data)))
        except _Died as died:
            _worker.close()
            _worker = None
            if died.starting:
                detail = f": {died.stderr}" if died.stderr else ""
                raise CompileError(f"{name}: cannot check {what}", [Diagnostic(
                    "error", name, f"mlxc's checking process (python -m "
                    f"mlxc.frontend.isolated_parse) {died.what}{detail}")]) from None
            if attempt == 2 or died.what.startswith("took"):
                detail = f"; it said: {died.stderr}" if died.stderr else ""
                message = (f"damaged {what}: reading it {died.what} in mlxc's checking process"
                           f"{detail}")
                raise CompileError(f"{name}: cannot read {what}",
                                   [Diagnostic("error", name, message)]) from None
    raise AssertionError("unreachable")


def _diagnostic(d: dict) -> Diagnostic:
    return Diagnostic(d["severity"], d["location"], d["message"],
                      [_diagnostic(n) for n in d.get("notes", ())])


def _as_dict(d: Diagnostic) -> dict:
    return {"severity": d.severity, "location": d.location, "message": d.message,
            "notes": [_as_dict(n) for n in d.notes]}


def shutdown() -> None:
    """Stop the worker (done at exit; it would also stop by itself, reading the end of
    its input)."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.close()
            _worker = None


# --- the worker ------------------------------------------------------------------

def _serve() -> None:
    from ..compile_context import compile_context
    from .source import parse_bytecode

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(_READY)
    stdout.flush()
    while True:
        header = stdin.readline()
        if not header:
            return
        request = json.loads(header)
        data = stdin.read(request["size"])
        try:
            with compile_context(data):
                parse_bytecode(data, request["name"])
            reply = {"ok": True}
        except CompileError as e:
            reply = {"ok": False, "summary": e.summary,
                     "diagnostics": [_as_dict(d) for d in e.diagnostics]}
        except Exception as e:  # noqa: BLE001 - any failure refuses the input, with its reason
            reply = {"ok": False, "summary": f"{request['name']}: cannot read the program",
                     "diagnostics": [_as_dict(Diagnostic("error", request["name"],
                                                         f"{type(e).__name__}: {e}"))]}
        stdout.write(json.dumps(reply).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    _serve()
