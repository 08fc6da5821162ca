"""The persistent compile cache: a compiled program kept on disk as an artifact.

The key is a SHA-256 of everything that decides the machine code: the source bytes,
the entry, the target and its options, every setting that can change code, this
machine's CPU (model and feature flags), and the versions of mlxc (its version and
a fingerprint of its own files, so an edited checkout never reuses stale code) and
of the MLIR bindings. A hit is one `mlxc.load` of the artifact: a few milliseconds.

An entry is `<dir>/v1/<key[:2]>/<key>.json`, naming the artifact beside it
(`<key>-<checksum>.so`) with its size and SHA-256. Both are written to temporary
files and renamed into place, the library first, so concurrent writers leave a
complete entry; a reader opens both without blocking and only as regular files of
the expected size (an entry replaced by a pipe, a device or a folder is a miss, never
a hang) and checks the library against its checksum before loading it, so a
truncated or corrupted entry is rebuilt, never loaded. Programs with `?` dimensions, MLIR module objects and
compiles that dump IR are not cached. This module imports nothing of the compiler:
`mlxc.compile` looks here before importing it.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from typing import Optional

from . import __version__, settings
from .runtime import artifact, files, native
from .runtime.executable import Executable

_log = logging.getLogger("mlxc")

FORMAT = "v1"
# Settings that do not change the code a compile produces.
_NOT_IN_KEY = {"dump_dir", "repro_dir", "cache", "cache_dir", "runtime_library", "check_contracts",
               "parse_timeout", "timing"}

_MAX_ENTRY = 1 << 20  # bytes of an entry's description (a few hundred in fact)

_lock = threading.Lock()
_fingerprint: Optional[str] = None
_warned = False


def _mlxc_fingerprint() -> str:
    """mlxc's version and the names, sizes and modification times of its files."""
    global _fingerprint
    with _lock:
        if _fingerprint is None:
            h = hashlib.sha256(f"mlxc {__version__}\n{_bindings_version()}\n".encode())
            roots = [os.path.dirname(os.path.abspath(__file__))]
            if native.source_dir():
                roots.append(native.source_dir())
            for root in roots:
                for folder, dirs, files in os.walk(root):
                    dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                    for name in sorted(files):
                        if name.endswith((".py", ".c", ".h", ".so", ".mlir")):
                            st = os.stat(os.path.join(folder, name))
                            h.update(f"{os.path.relpath(os.path.join(folder, name), root)} "
                                     f"{st.st_size} {st.st_mtime_ns}\n".encode())
            _fingerprint = h.hexdigest()
        return _fingerprint


def _bindings_version() -> str:
    # What mlxc._mlir.bindings_version() says, without importing the bindings (a cache
    # hit then costs no compiler import) and without importlib.metadata's scan of
    # every installed package: the version is in the name of the dist-info folder.
    import importlib.util

    spec = importlib.util.find_spec("torch_mlir")
    if spec is None or not spec.submodule_search_locations:
        return "torch-mlir absent"
    site = os.path.dirname(list(spec.submodule_search_locations)[0])
    found = [name for name in os.listdir(site)
             if name.startswith("torch_mlir-") and name.endswith(".dist-info")]
    if len(found) == 1:
        return "torch-mlir " + found[0][len("torch_mlir-"):-len(".dist-info")]
    from importlib import metadata

    try:
        return "torch-mlir " + metadata.version("torch-mlir")
    except metadata.PackageNotFoundError:
        return "torch-mlir unknown"


def _source_bytes(source) -> Optional[bytes]:
    # A file, its bytes and its text make the same program: one key for all three.
    # A string naming no file is keyed as text; if the compiler reads it as a path
    # instead, the compile fails and nothing is stored under that key.
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source and len(source) < 4096
            and os.path.isfile(source)):
        try:
            with open(os.fspath(source), "rb") as f:
                return f.read()
        except OSError:
            return None  # the compile reports it
    if isinstance(source, str):
        return source.encode("utf-8", "surrogatepass")
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    return None  # an ir.Module: its bytes would cost as much as a compile


def key(source, target: str, entry: str, start_after: Optional[str], options: dict) -> Optional[str]:
    """The cache key of a compile, or None when it is not cached."""
    if not settings.get("cache") or settings.get("dump_dir") or options.get("target_triple"):
        return None
    data = _source_bytes(source)
    if data is None:
        return None
    model, flags = artifact.host_cpu()
    knobs = {name: repr(settings.get(name)) for name in settings.SETTINGS if name not in _NOT_IN_KEY}
    header = json.dumps({"format": FORMAT, "target": target, "entry": entry,
                         "start_after": start_after, "options": repr(sorted(options.items())),
                         "settings": knobs, "arch": artifact.host_arch(), "cpu": model,
                         "cpu_flags": sorted(flags), "mlxc": _mlxc_fingerprint()}, sort_keys=True)
    h = hashlib.sha256(header.encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


def _folder(k: str) -> str:
    return os.path.join(settings.get("cache_dir"), FORMAT, k[:2])


def lookup(k: Optional[str]) -> Optional[Executable]:
    """The cached executable for key `k`, or None (a miss, or an entry that fails its check)."""
    if k is None:
        return None
    with _lock:
        if k in _in_flight:  # compiled here a moment ago; its entry is being written
            return _in_flight[k]
    folder = _folder(k)
    try:
        # Only regular files, opened without blocking: an entry replaced by a pipe, a
        # device or a folder is a miss, never a hang.
        want = json.loads(files.read_regular_file(os.path.join(folder, k + ".json"), _MAX_ENTRY))
        name = want["library"]
        if os.path.basename(name) != name or not name.startswith(k):
            return None
        lib = os.path.join(folder, name)
        data = files.read_regular_file(lib, want["size"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if len(data) != want.get("size") or hashlib.sha256(data).hexdigest() != want.get("sha256"):
        return None  # truncated or corrupted: compile again and rewrite
    try:
        exe = artifact.load(lib)
    except (artifact.ArtifactError, OSError):
        return None
    exe.from_cache = lib
    _log.info("mlxc.compile: a cache hit, %s (MLXC_CACHE=0 compiles afresh)", lib)
    return exe


_pending: list[threading.Thread] = []
_in_flight: dict[str, Executable] = {}


def store(k: Optional[str], exe) -> None:
    """Keep `exe` under key `k`, linking the artifact in a background thread: a cold
    compile returns as soon as the JIT is done. The interpreter waits for the thread
    at exit. A failure (no C compiler, a read-only disk) only warns."""
    if k is None or not isinstance(exe, Executable):
        return
    folder = _folder(k)  # read here: settings overrides belong to the calling thread
    # The caller's settings overrides hold in the thread too (linking reads cache_dir).
    thread = threading.Thread(target=contextvars.copy_context().run, args=(_write, k, exe, folder),
                              name="mlxc-cache-store")
    with _lock:
        _pending[:] = [t for t in _pending if t.is_alive()] + [thread]
        _in_flight[k] = exe
    thread.start()


def wait() -> None:
    """Return when every entry being written has been written."""
    with _lock:
        threads = list(_pending)
    for thread in threads:
        thread.join()


def _write(k: str, exe: Executable, folder: str) -> None:
    global _warned
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".so", dir=folder)
        os.close(fd)
        try:
            exe.save(tmp)
            with open(tmp, "rb+") as f:
                data = f.read()
                os.fsync(f.fileno())
            digest = hashlib.sha256(data).hexdigest()
            # The library's name holds its checksum: a name only ever holds those bytes,
            # so concurrent writers never leave a description of another file.
            name = f"{k}-{digest[:16]}.so"
            os.replace(tmp, os.path.join(folder, name))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        files.write_atomically(os.path.join(folder, k + ".json"), json.dumps({
            "library": name, "size": len(data), "sha256": digest,
            "signature": str(exe.signature)}).encode())
        with _lock:
            _in_flight.pop(k, None)
    except Exception as e:  # noqa: BLE001 - the cache must never fail a compile
        with _lock:
            _in_flight.pop(k, None)
        if not _warned:
            _warned = True
            warnings.warn(f"mlxc: not caching compiled programs in {folder}: {e} "
                          "(MLXC_CACHE=0 turns the cache off)", RuntimeWarning, stacklevel=2)
