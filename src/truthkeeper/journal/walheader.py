"""Whether another connection may have committed, from SQLite's wal-index header.

In WAL mode every commit, by any connection of any process, rewrites the wal-index header
at the start of the ``-shm`` file (https://www.sqlite.org/walformat.html: two copies of a
48-byte header whose change counter ``iChange`` moves on every transaction, with the last
frame ``mxFrame`` and the salts of a restarted log); a reader takes its snapshot from that
header. So while those 96 bytes read the same as when ``PRAGMA data_version`` was last
asked, nothing was committed since, and its answer stands: one ``pread`` and one ``fstat``
instead of a statement, on every read of a durable memory.

Any difference (a commit, a torn read while a writer updates the header, a file cut
short, a header not initialised) only sends the caller to ``PRAGMA data_version``, the
authority. The header is read before that pragma, so a commit between the two is seen
at the next call.

The header is read through the descriptor SQLite itself opened on the ``-shm`` file (found
in ``/proc/self/fd`` when the journal's connection is open; SQLite keeps it open while any
connection of the process uses the file). This module never opens nor closes a descriptor
of that file: closing one drops every POSIX lock the process holds on the file, SQLite's
own for every connection of the process, including connections this module cannot know
of (an application's own, or one Python has not finished closing), and another process
could then checkpoint and truncate the log under their open reads. Each read checks
that the descriptor still names the file (``fstat``); where it does not, or where there is
no ``/proc/self/fd``, every version check asks SQLite.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["HEADER_BYTES", "WalHeader", "attach"]

HEADER_BYTES = 96
"""The two copies of the wal-index header."""

_IS_INIT = 12
"""The offset of ``isInit`` in the header: 1 once a connection has initialised it."""

_FDS = "/proc/self/fd"


@dataclass
class WalHeader:
    """The wal-index header of one journal's ``-shm`` file, as last read before asking
    ``PRAGMA data_version`` (:meth:`unchanged`, :meth:`seen`). :func:`attach` makes one."""

    key: tuple[int, int] | None = None
    fd: int = -1
    last: bytes | None = field(default=None, repr=False)

    def read(self) -> bytes | None:
        """The header now, or None when it cannot be read (no ``-shm`` descriptor, one
        that no longer names the file, cut short, not initialised)."""
        if self.fd < 0:
            return None
        try:
            st = os.fstat(self.fd)
            if (st.st_dev, st.st_ino) != self.key:  # closed, its number reused
                return None
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
        """Call when this journal's connection closes: the descriptor is SQLite's, and is
        no longer read (never closed here)."""
        self.key, self.fd, self.last = None, -1, None


def attach(path: str) -> WalHeader:
    """The header reader of a journal whose connection to ``path`` is open and has read
    (so SQLite has opened its ``-shm`` file); one that always answers None where that
    descriptor cannot be found."""
    if not hasattr(os, "pread"):
        return WalHeader()
    try:
        st = os.stat(f"{path}-shm")
        names = os.listdir(_FDS)
    except OSError:
        return WalHeader()
    key = (st.st_dev, st.st_ino)
    for name in names:
        try:
            fd = int(name)
            found = os.fstat(fd)
        except (ValueError, OSError):
            continue
        if (found.st_dev, found.st_ino) == key:
            return WalHeader(key, fd)
    return WalHeader()
