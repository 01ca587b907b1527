"""Whether another connection may have committed, from SQLite's wal-index header.

In WAL mode every commit, by any connection of any process, rewrites the wal-index header
at the start of the ``-shm`` file (https://www.sqlite.org/walformat.html: two copies of a
48-byte header whose change counter ``iChange`` moves on every transaction, with the last
frame ``mxFrame`` and the salts of a restarted log); a reader takes its snapshot from that
header. So while those 96 bytes read the same as when ``PRAGMA data_version`` was last
asked, nothing was committed since, and its answer stands: one ``pread`` (about 0.6 us)
instead of a statement (about 2.9 us), on every read of a durable memory.

Any difference (a commit, a torn read while a writer updates the header, a file cut
short, a header not initialised) only sends the caller to ``PRAGMA data_version``, the
authority. The header is read before that pragma, so a commit between the two is seen
at the next call.

The descriptor of a ``-shm`` file is opened once per process and file, and closed only
when the last journal of this process on that file closes: closing any descriptor of a
file drops every POSIX lock the process holds on it (SQLite's own, for every connection
of the process), so none is closed while a connection of this process may use the file.
Every journal registers when its connection opens (:func:`attach`), whether or not it
reads the header, and releases after its connection is closed.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

__all__ = ["HEADER_BYTES", "WalHeader", "attach"]

HEADER_BYTES = 96
"""The two copies of the wal-index header."""

_IS_INIT = 12
"""The offset of ``isInit`` in the header: 1 once a connection has initialised it."""

_lock = threading.Lock()
_open: dict[tuple[int, int], list[int]] = {}  # (st_dev, st_ino) -> [journals, fd, fd...]


@dataclass
class WalHeader:
    """The wal-index header of one journal's ``-shm`` file, as last read before asking
    ``PRAGMA data_version`` (:meth:`unchanged`, :meth:`seen`). :func:`attach` makes one."""

    key: tuple[int, int] | None = None
    fd: int = -1
    last: bytes | None = field(default=None, repr=False)

    def read(self) -> bytes | None:
        """The header now, or None when it cannot be read (no ``-shm`` file, cut short,
        not initialised)."""
        if self.fd < 0:
            return None
        try:
            head = os.pread(self.fd, HEADER_BYTES, 0)
        except OSError:
            return None
        if len(head) < HEADER_BYTES or head[_IS_INIT] != 1:
            return None
        return head

    def unchanged(self, head: bytes | None) -> bool:
        """Whether ``head`` (just read) is the header last :meth:`seen`."""
        return head is not None and head == self.last

    def seen(self, head: bytes | None) -> None:
        """``head``, read before ``PRAGMA data_version`` was asked, goes with its answer."""
        self.last = head

    def release(self) -> None:
        """Call once this journal's connection is closed: the descriptor is closed with
        the last journal of this process on the file."""
        key, self.key, self.fd, self.last = self.key, None, -1, None
        if key is None:
            return
        with _lock:
            entry = _open.get(key)
            if entry is None:
                return
            entry[0] -= 1
            if entry[0] <= 0:
                del _open[key]
                for fd in entry[1:]:
                    os.close(fd)


def attach(path: str) -> WalHeader:
    """Register a journal whose connection to ``path`` is open; its header reader (one
    that always answers None where there is no ``-shm`` file or no ``pread``)."""
    shm = f"{path}-shm"
    if not hasattr(os, "pread"):
        return WalHeader()
    try:
        st = os.stat(shm)
    except OSError:
        return WalHeader()
    key = (st.st_dev, st.st_ino)
    with _lock:
        entry = _open.get(key)
        if entry is not None:  # open already: shared, never a second descriptor to close
            entry[0] += 1
            return WalHeader(key, entry[1])
        try:
            fd = os.open(shm, os.O_RDONLY)
        except OSError:
            return WalHeader()
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)  # the file opened, if it was replaced meanwhile
        except OSError:
            pass
        entry = _open.setdefault(key, [0])
        entry[0] += 1
        entry.append(fd)  # kept until the last journal on the file releases
        return WalHeader(key, entry[1])
