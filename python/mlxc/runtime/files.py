"""Reading and replacing files that another process may have changed, safely.

A path mlxc reads back (a cache entry, an artifact) may have been replaced by a pipe,
a device or a folder, truncated, or be mapped by a process that runs its code. So
reads open without blocking and take only regular files of a bounded size, and
writes never change a file in place: they go to a temporary file in the same folder,
are flushed to disk and renamed over the old name, so a process that mapped the old
file keeps its (intact) copy and a reader sees one whole file or the other.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import Callable, Optional


class NotARegularFile(OSError):
    """The path names a folder, a pipe, a device or a socket, or a file over the size limit."""


def read_regular_file(path: str, limit: Optional[int] = None) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; raises OSError
    (NotARegularFile for anything but a regular file, or one longer than `limit`)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)  # a FIFO opens at once without O_NONBLOCK's writer wait
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise NotARegularFile(errno.EINVAL, kind, path)
        if limit is not None and st.st_size > limit:
            raise NotARegularFile(errno.EFBIG, f"{st.st_size} bytes, more than the {limit} expected",
                                  path)
        chunks = []
        left = st.st_size if limit is None else min(st.st_size, limit)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def replace_atomically(path: str, write: Callable[[object], None], mode: Optional[int] = None) -> None:
    """Make `path` the file that `write(f)` writes into a binary file object: written
    beside it, flushed to disk and renamed over it (never changed in place). `mode`:
    its permissions (the temporary file's own, 0o600, otherwise)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomically(path: str, data: bytes, mode: Optional[int] = None) -> None:
    replace_atomically(path, lambda f: f.write(data), mode)
