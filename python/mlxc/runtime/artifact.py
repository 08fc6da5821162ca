"""`mlxc.load`: open an artifact written by `exe.save` or `mlxc compile`. No compiler imports.

An artifact is one shared library with the C ABI of `runtime/mlxc_artifact.h`:
`mlxc_entry(void **buffers)` (the JIT's calling convention) and `mlxc_manifest()`,
a JSON description of the signature and of the CPU it was compiled for, followed by
a checksum trailer (after the ELF data, where the dynamic loader never looks): the
SHA-256 of everything before it. Loading checks the trailer before the library is
opened (a truncated library makes the loader die of SIGBUS, and an edited manifest
describes buffers the code does not have), reads the manifest, checks that this
machine can run the code, and wraps the entry point in the same `Executable` the JIT
returns: same argument checks, same errors, same speed, callable from several
threads at once. Saving a loaded artifact writes a new file and renames it into
place, never over a library some process has mapped.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import json
import os
import platform
import struct
import sys
import tempfile
import threading
from typing import Optional

from . import files
from .executable import Executable
from .signature import Signature

ABI_VERSION = 2  # MLXC_ABI_VERSION in runtime/mlxc_artifact.h
# The code's own record of its signature (targets/cpu/link.py puts it into the program).
SIGNATURE_SYMBOL = "mlxc_signature_sha256"

# ELF e_machine values of the architectures mlxc names, for clear "wrong CPU" errors.
ELF_MACHINES = {62: "x86_64", 183: "aarch64", 243: "riscv64", 21: "ppc64", 3: "i386", 40: "arm"}
_ELF_TYPES = {1: "an object file", 2: "an executable", 3: "a shared library"}

# The instruction-set extensions whose absence makes code compiled for the build
# machine fault on another one. The manifest lists those the build machine had;
# loading refuses a machine that lacks one, instead of dying of SIGILL mid-call.
_ISA_FLAGS = frozenset("""
    sse4_1 sse4_2 avx avx2 fma f16c bmi1 bmi2 movbe avx512f avx512cd avx512bw avx512dq avx512vl
    avx512ifma avx512vbmi avx512vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq avx512_bf16
    avx512_fp16 avx_vnni amx_tile amx_bf16 amx_int8
    asimd asimdhp asimddp sve sve2 bf16 i8mm fphp
""".split())


class ArtifactError(RuntimeError):
    """An artifact that cannot be loaded here: not an mlxc artifact, damaged, or built
    for another CPU or another version of the artifact ABI."""


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


_cpu_lock = threading.Lock()
_cpu_info: Optional[tuple[str, frozenset]] = None


def host_cpu() -> tuple[str, frozenset]:
    """(model name, feature flags) of this machine's CPU, from /proc/cpuinfo where it exists."""
    global _cpu_info
    with _cpu_lock:
        if _cpu_info is None:
            model, flags = "", frozenset()
            try:
                with open("/proc/cpuinfo") as f:
                    for line in f:  # the first processor is enough
                        key, _, value = line.partition(":")
                        key = key.strip()
                        if key == "model name" and not model:
                            model = value.strip()
                        elif key in ("flags", "Features") and not flags:
                            flags = frozenset(value.split())
                        if model and flags:
                            break
            except OSError:
                pass
            model = model or platform.processor() or host_arch()
            _cpu_info = (model, flags)
        return _cpu_info


def required_cpu_flags() -> list[str]:
    """The instruction-set extensions of this machine that compiled code may use."""
    return sorted(host_cpu()[1] & _ISA_FLAGS)


def elf_header(data: bytes) -> Optional[tuple[str, int]]:
    """(kind, e_machine) of an ELF file's first bytes, or None when it is not ELF."""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    order = "<" if data[5] == 1 else ">"
    e_type, e_machine = struct.unpack(order + "HH", data[16:20])
    return _ELF_TYPES.get(e_type, f"an ELF file of type {e_type}"), e_machine


# The checksum trailer: magic, the byte count it covers (little-endian u64), SHA-256.
_TRAILER_MAGIC = b"MLXC-SUM"
TRAILER_BYTES = len(_TRAILER_MAGIC) + 8 + 32


def checksum_trailer(data: bytes) -> bytes:
    """What `data` (a linked library) gets appended to become an artifact."""
    return _TRAILER_MAGIC + struct.pack("<Q", len(data)) + hashlib.sha256(data).digest()


def _read(path: str) -> bytes:
    try:
        return files.read_regular_file(path)
    except files.NotARegularFile as e:
        raise ArtifactError(f"{path}: {e.strerror}, not an artifact") from None
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such artifact") from None
    except OSError as e:
        raise ArtifactError(f"{path}: cannot read it ({e.strerror or e})") from None


def _check_file(path: str, data: bytes) -> Optional[bytes]:
    """The artifact's checksum (None for one linked by hand, which has none), after
    checking that `data` is an intact artifact for this machine."""
    if sys.platform.startswith("linux"):
        elf = elf_header(data[:64])
        if elf is None:
            raise ArtifactError(f"{path}: not an mlxc artifact (not an ELF shared library)")
        kind, machine = elf
        arch = ELF_MACHINES.get(machine, f"machine type {machine}")
        if arch != host_arch():
            raise ArtifactError(f"{path}: compiled for {arch}; this machine is {host_arch()}")
        if kind != "a shared library":
            raise ArtifactError(f"{path}: {kind}, not a shared library; link a cross-compiled "
                                "object with the target's C compiler to make an artifact")
        _check_elf_extent(path, data)
    trailer = data[-TRAILER_BYTES:]
    if len(data) < TRAILER_BYTES or not trailer.startswith(_TRAILER_MAGIC):
        return None  # linked by hand (a cross-compiled object): nothing more to check
    (size,) = struct.unpack("<Q", trailer[len(_TRAILER_MAGIC):len(_TRAILER_MAGIC) + 8])
    digest = trailer[-32:]
    if size != len(data) - TRAILER_BYTES or hashlib.sha256(data[:size]).digest() != digest:
        raise ArtifactError(f"{path}: damaged artifact: its contents do not match the checksum "
                            "mlxc wrote at its end (the file was truncated or modified after "
                            "it was written); compile or save it again")
    return digest


def _check_elf_extent(path: str, data: bytes) -> None:
    """Refuse an ELF file whose segments or sections reach past its end: the dynamic
    loader maps them anyway, and the process dies of SIGBUS when it touches them."""
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    n = len(data)

    def fields(fmt: str, offset: int) -> tuple:
        if offset < 0 or offset + struct.calcsize(order + fmt) > n:
            raise ArtifactError(f"{path}: truncated or damaged shared library (its headers end "
                                f"past its {n} bytes)")
        return struct.unpack_from(order + fmt, data, offset)

    if wide:
        phoff, shoff = fields("QQ", 32)
        phentsize, phnum, shentsize, shnum = fields("HHHH", 54)
        # (type, offset, size) of a program header and of a section header
        segment, section = "I4xQ16xQ", "4xI16xQQ"
    else:
        phoff, shoff = fields("II", 28)
        phentsize, phnum, shentsize, shnum = fields("HHHH", 42)
        segment, section = "II8xI", "4xI8xII"
    for table, count, size in ((phoff, phnum, phentsize), (shoff, shnum, shentsize)):
        if count and table + count * size > n:
            raise ArtifactError(f"{path}: truncated or damaged shared library (its headers end "
                                f"past its {n} bytes)")
    for i in range(phnum):
        kind, offset, size = fields(segment, phoff + i * phentsize)
        if kind == 1 and offset + size > n:  # PT_LOAD
            raise ArtifactError(f"{path}: truncated or damaged shared library (a segment ends at "
                                f"byte {offset + size}, past its {n} bytes)")
    for i in range(shnum):
        kind, offset, size = fields(section, shoff + i * shentsize)
        if kind != 8 and offset + size > n:  # not SHT_NOBITS
            raise ArtifactError(f"{path}: truncated or damaged shared library (a section ends at "
                                f"byte {offset + size}, past its {n} bytes)")


_link_dir: Optional[str] = None
_link_counter = itertools.count()
_opened: dict[str, tuple] = {}  # path -> identity of the file opened under that name
_open_lock = threading.Lock()


def _dlopen(path: str) -> ctypes.CDLL:
    # The C library recognises an already-open library by the name it was opened
    # under, so a file rewritten in place would come back as the old code. A path
    # whose file changed since we opened it is opened through a fresh link name,
    # which makes the C library compare files (device and inode) instead.
    global _link_dir
    st = os.stat(path)
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _open_lock:
        previous = _opened.setdefault(path, identity)
    if previous == identity or os.name != "posix":
        return ctypes.CDLL(path)
    try:
        if _link_dir is None:
            _link_dir = tempfile.mkdtemp(prefix="mlxc-load-")
        alias = os.path.join(_link_dir, f"{os.getpid()}-{next(_link_counter)}.so")
        os.symlink(path, alias)
    except OSError:
        return ctypes.CDLL(path)
    try:
        return ctypes.CDLL(alias)
    finally:
        os.unlink(alias)


def read_manifest(lib: ctypes.CDLL, path: str) -> dict:
    try:
        manifest_fn, abi_fn = lib.mlxc_manifest, lib.mlxc_abi_version
        lib.mlxc_entry  # noqa: B018 - present, or this is not an artifact
    except AttributeError as e:
        raise ArtifactError(f"{path}: not an mlxc artifact ({e})") from None
    manifest_fn.restype = ctypes.c_char_p
    abi_fn.restype = ctypes.c_int
    abi = abi_fn()
    if abi != ABI_VERSION:
        raise ArtifactError(f"{path}: artifact ABI version {abi}; this mlxc reads version "
                            f"{ABI_VERSION}: recompile the program with this mlxc")
    try:
        manifest = json.loads(manifest_fn().decode("utf-8"))
        manifest["signature"]["inputs"]
    except (ValueError, KeyError, TypeError) as e:
        raise ArtifactError(f"{path}: damaged artifact manifest ({e})") from None
    return manifest


def signature_digest(signature: Signature) -> str:
    return hashlib.sha256(signature.to_json().encode()).hexdigest()


def check_signature(lib: ctypes.CDLL, signature: Signature, path: str) -> None:
    """Refuse a manifest that does not describe the code: the program's buffers would
    be read and written with other shapes or types."""
    try:
        recorded = (ctypes.c_char * 65).in_dll(lib, SIGNATURE_SYMBOL).value.decode("ascii", "replace")
    except ValueError:
        raise ArtifactError(f"{path}: not an mlxc artifact of ABI {ABI_VERSION} (no "
                            f"{SIGNATURE_SYMBOL} symbol)") from None
    if recorded != signature_digest(signature):
        raise ArtifactError(f"{path}: the manifest describes {signature}, which is not the "
                            "signature the code was compiled for (the manifest was edited, or "
                            "linked with another program's code); compile it again")


def check_cpu(manifest: dict, path: str) -> None:
    target = manifest.get("target", {})
    if target.get("arch") and target["arch"] != host_arch():
        raise ArtifactError(f"{path}: compiled for {target['arch']}; this machine is {host_arch()}")
    have = host_cpu()[1]
    missing = sorted(set(target.get("cpu_flags", ())) - have) if have else []
    if missing:
        raise ArtifactError(
            f"{path}: compiled for a CPU with {', '.join(missing)}, which this CPU "
            f"({host_cpu()[0]}) lacks; compile the program on this machine, or on one like it")


def load(path) -> Executable:
    """Open an artifact written by `exe.save(path)` or `mlxc compile -o path`.

    Returns an `Executable` that takes and returns numpy arrays, like `mlxc.compile`'s.
    Raises `FileNotFoundError`, or `ArtifactError` naming what is wrong with the file.
    """
    path = os.path.abspath(os.fspath(path))
    digest = _check_file(path, _read(path))
    try:
        lib = _dlopen(path)
    except OSError as e:
        raise ArtifactError(f"{path}: cannot load ({e})") from None
    manifest = read_manifest(lib, path)
    check_cpu(manifest, path)
    try:
        signature = Signature.from_json(json.dumps(manifest["signature"]))
    except (ValueError, KeyError, TypeError) as e:
        raise ArtifactError(f"{path}: damaged artifact manifest ({e})") from None
    check_signature(lib, signature, path)
    address = ctypes.cast(lib.mlxc_entry, ctypes.c_void_p).value

    def save(dest) -> None:
        dest = os.path.abspath(os.fspath(dest))
        if dest == path:
            return
        data = _read(path)
        if digest is not None and data[-32:] != digest:
            raise ArtifactError(f"{path} was replaced since it was loaded; load it again to save it")
        files.write_atomically(dest, data, 0o755)

    return Executable(signature, address, packed=False, keepalive=lib,
                      stats=manifest.get("memory"), saver=save, manifest=manifest)
