"""The durable journal: append-only SQLite events with a hash chain.

One row per event (see :data:`.codec.EVENT_KINDS`). Each row carries
the hash of the previous one, so an edit anywhere breaks the chain from that row on. WAL mode,
``synchronous=FULL`` by default (``NORMAL`` may lose the last transactions on power loss, never
on a process crash), ``BEGIN IMMEDIATE`` for writes (one writer at a time, readers never
blocked), triggers that abort UPDATE and DELETE.
"""

from __future__ import annotations

import functools
import os
import secrets
import sqlite3
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import JournalCorrupt, JournalError, brief
from . import walheader
from .base import FORMAT, READABLE, Row, Txn, format_refusal
from .codec import GENESIS, canonical
from .slotindex import KNOWN_TABLES, IndexedJournal, SlotIndex, SqliteDb

if TYPE_CHECKING:
    from ..values import Fact

__all__ = ["SqliteJournal"]

T = TypeVar("T")

_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
DROP TRIGGER IF EXISTS events_append_only_update;
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
WHEN NOT (NEW.seq = OLD.seq AND OLD.kind IN ('fact', 'audit', 'rule', 'outcome')
          AND NEW.kind = OLD.kind AND NEW.recorded_at = OLD.recorded_at
          AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
          AND substr(NEW.body, 1, 11) = '{"$erased":')
BEGIN SELECT RAISE(ABORT, 'truthkeeper journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'truthkeeper journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_chained BEFORE INSERT ON events
WHEN NEW.prev_hash IS NOT (CASE WHEN NEW.seq = 1 THEN '{genesis}'
                           ELSE (SELECT hash FROM events WHERE seq = NEW.seq - 1) END)
BEGIN SELECT RAISE(ABORT, 'truthkeeper journal: an event must chain from its hash'); END;
COMMIT;
""".replace("{genesis}", GENESIS)
# one transaction: processes opening the same journal at once would otherwise interleave
# the DROP and CREATE of the trigger. events_chained: the database itself refuses an event
# that does not chain from the one before it (a writer whose idea of the tail is not the
# journal's gets an error, and nothing is appended, instead of writing a broken link).


@functools.cache
def _schema_rows() -> frozenset[tuple[Any, ...]]:
    """What :data:`_SCHEMA` puts in ``sqlite_master`` (made once, in a database in memory)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.executescript(_SCHEMA)
        return frozenset(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
    finally:
        conn.close()


PURGE_WAIT_MS = 2_000
"""How long an erasure waits for other connections' read transactions to end before it
reports that the write-ahead log still holds the erased bytes."""
APPLICATION_ID = 0x746B6A31  # "tkj1": marks a SQLite file as a truthkeeper journal
_CHUNK = 5_000  # rows fetched at a time while replaying


def _close(conn: sqlite3.Connection, wal: walheader.WalHeader) -> None:
    """Close a journal's connection, then release its hold on the -shm file (also when a
    journal is collected without being closed)."""
    try:
        conn.close()
    finally:
        wal.release()


class SqliteJournal(IndexedJournal):
    """An append-only event log in one SQLite file. Refuses an existing file that is not a
    truthkeeper journal (another application's database, a file cut to nothing). Keeps a
    slot index beside the events (:mod:`.slotindex`) for memories opened lazily."""

    def __init__(self, path: str, *, synchronous: str = "FULL", readonly: bool = False,
                 busy_timeout_ms: int = 30_000) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            msg = f"synchronous must be 'FULL' or 'NORMAL', got {brief(synchronous)}"
            raise JournalError(msg)
        if not readonly and not os.path.exists(path):
            _create(path, synchronous)
        _check_file(path)
        self._setup(path, synchronous, readonly, busy_timeout_ms)

    def _setup(self, path: str, synchronous: str, readonly: bool,
               busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        self.readonly = readonly
        self._indexed: bool | None = None
        try:
            if readonly:
                uri = f"file:{os.path.abspath(path)}?mode=ro"
                self._conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                             check_same_thread=False)
            else:
                self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            self._asks = self._conn.cursor()  # version(), on every read: no cursor made
            self._busy_ms, self.purge_pending = int(busy_timeout_ms), False
            self._check_schema()
            self._check_format(readonly)
            if not readonly:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA secure_delete=ON")  # erased bodies are zeroed
                self._conn.execute(f"PRAGMA synchronous={synchronous}")
                new = not self._has_events()  # (made by _create: nobody else sees it)
                if new or not self._schema_current():  # else no write lock is waited for
                    self._conn.executescript(_SCHEMA)
                    self._conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                if new:  # a new journal is indexed from its first event on
                    self.index.rebuild(iter(()))
        except sqlite3.Error as exc:
            msg = f"cannot open journal {path!r}: {exc}"
            raise JournalError(msg) from exc
        self._wal = walheader.attach(path)  # registered while the connection is open
        self._version: object = None
        self._closed = weakref.finalize(self, _close, self._conn, self._wal)

    def _schema_current(self) -> bool:
        """Whether the file's events table and triggers are exactly those :data:`_SCHEMA`
        makes, and it is marked a journal: then opening it writes nothing, and so never
        waits for another connection's write (a bulk load of several seconds held every
        open that long, and past the busy timeout failed it: "database is locked")."""
        rows = set(self._conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name = 'events'"))
        app = self._conn.execute("PRAGMA application_id").fetchone()[0]
        return app == APPLICATION_ID and rows == _schema_rows()

    def _check_schema(self) -> None:
        tables = {r[0] for r in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        app = self._conn.execute("PRAGMA application_id").fetchone()[0]
        if tables - {"events"} - KNOWN_TABLES or (tables and app not in (0, APPLICATION_ID)) \
                or (not tables and app not in (0, APPLICATION_ID)):
            self._conn.close()
            msg = (f"{self.path!r} is a SQLite database of another application (tables: "
                   f"{', '.join(sorted(tables)) or 'none'}), not a truthkeeper journal; "
                   "pass the path of a journal, or of a file that does not exist yet")
            raise JournalError(msg)

    def _check_format(self, readonly: bool) -> None:
        """Formats 2 and 3 chain content hashes (erasure keeps the chain; 3 adds event
        kinds, and a format 2 journal opened for writing is marked 3); format 1 journals
        (before erasure existed) chained body texts, and a later format is a later
        truthkeeper's: both are refused with what to do (:func:`format_refusal`)."""
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        has_events = self._conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        if has_events and version not in READABLE:
            self._conn.close()
            raise JournalError(format_refusal(self.path, version or 1))
        if version != FORMAT and not readonly:  # new, or format 2: upgraded in place
            self._conn.execute(f"PRAGMA user_version={FORMAT}")

    def close(self) -> None:
        if self.purge_pending:  # an erasure's old pages may still be in the write-ahead log
            with suppress(JournalError):
                self._purge()
        self._closed()  # the connection, then this journal's hold on the -shm file

    def _has_events(self) -> bool:
        return bool(self._conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'events'").fetchone()[0])

    @property
    def index(self) -> SlotIndex:
        return self._slot_index(SqliteDb(self._conn))

    # ------------------------------------------------------------------ the slot index

    def _index_read(self, fn: Callable[[SlotIndex], T]) -> T:
        try:
            return fn(self.index)
        except sqlite3.Error as exc:
            msg = f"cannot read the index of journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        try:
            self._conn.execute("BEGIN")  # a read transaction keeps one WAL snapshot
        except sqlite3.Error as exc:
            msg = f"cannot read journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc
        try:
            yield
        finally:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def reader(self) -> SqliteJournal:
        return SqliteJournal(str(self.path), readonly=True, busy_timeout_ms=self._busy_ms)

    def reader_spec(self) -> dict[str, Any]:
        return {"path": str(self.path), "busy_ms": self._busy_ms}

    def _index_write(self, fn: Callable[[SlotIndex], T]) -> T:
        try:
            with self._writing():
                return fn(self.index)
        except sqlite3.Error as exc:
            msg = f"cannot index journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc

    def _writing(self) -> AbstractContextManager[object]:
        """A write transaction, or the one already open (an index change inside a write)."""
        return nullcontext() if self._conn.in_transaction else self.transaction()

    def _first_row(self) -> Row | None:
        try:
            row: Row | None = self._conn.execute(
                "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
                "WHERE seq = 1").fetchone()
        except sqlite3.Error as exc:
            msg = f"cannot read journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc
        return row

    def _select(self, after_seq: int) -> list[Row]:
        return list(self._select_iter(after_seq))

    def _select_iter(self, after_seq: int) -> Iterator[Row]:
        try:
            cur = self._conn.execute(
                "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
                "WHERE seq > ? ORDER BY seq", (after_seq,))
            while rows := cur.fetchmany(_CHUNK):
                yield from rows
        except sqlite3.Error as exc:
            msg = f"cannot read journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc

    def _insert(self, rows: list[Row], facts: Mapping[int, Fact] | None = None) -> None:
        try:
            self._conn.executemany(
                "INSERT INTO events(seq, kind, recorded_at, body, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._index_new_rows(self.index, rows, facts)
        except (sqlite3.Error, OSError) as exc:
            msg = f"write to journal {self.path!r} failed: {exc}"
            raise JournalError(msg) from exc

    def _update_body(self, seq: int, body: str, naming: dict[str, Any] | None = None) -> None:
        try:
            self.index.erased(seq, body, naming)  # before: it reads the body being replaced
            self._conn.execute("UPDATE events SET body = ? WHERE seq = ?", (body, seq))
        except sqlite3.Error as exc:
            msg = f"erasure in journal {self.path!r} failed: {exc}"
            raise JournalError(msg) from exc

    def _scan_fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        out: dict[str, tuple[int, str]] = {}
        for fid in ids:
            row = self._conn.execute(
                "SELECT seq, body FROM events WHERE kind = 'fact' AND body LIKE ? ESCAPE '\\'"
                " AND json_extract(body, '$.id') = ?",
                ('%"id":' + _like(canonical(fid)) + '%', fid)).fetchone()
            if row is not None:
                out[fid] = (int(row[0]), str(row[1]))
        return out

    def _purge(self) -> None:
        """Checkpoint and truncate the write-ahead log, which still holds the pages an
        erasure overwrote. Another connection's open read transaction can keep it from
        completing: JournalError then, after at most ``PURGE_WAIT_MS``; the next commit
        and ``close`` try again until one completes."""
        self.purge_pending = True
        try:
            self._conn.execute(f"PRAGMA busy_timeout={PURGE_WAIT_MS}")
            busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:
            busy, why = 1, str(exc)
        else:
            why = "another connection holds a read transaction open"
        finally:
            with suppress(sqlite3.Error):
                self._conn.execute(f"PRAGMA busy_timeout={self._busy_ms}")
        if busy:
            msg = (f"the erasure is committed, but the write-ahead log of {self.path!r} could "
                   f"not be truncated ({why}): the erased bytes stay in {self.path!r}-wal "
                   "until a checkpoint completes, which the next write or close() retries")
            raise JournalError(msg)
        self.purge_pending = False

    def version(self) -> object:
        """SQLite's data_version: it changes when another connection commits (asked under
        the memory's lock, on the one cursor kept for it), unless the wal-index header
        shows that nothing was committed since it was last asked (:mod:`.walheader`)."""
        head = self._wal.read()
        if self._wal.unchanged(head):
            return self._version
        self._version = self._asks.execute("PRAGMA data_version").fetchone()[0]
        self._wal.seen(head)  # read before the pragma: a commit between them is seen next
        return self._version

    def tail(self) -> tuple[int, str, int]:
        """(last seq, its hash, the largest recorded_at) or (0, GENESIS, 0)."""
        row = self._conn.execute(
            "SELECT seq, hash, recorded_at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            return 0, GENESIS, 0
        return int(row[0]), str(row[1]), int(row[2])

    def integrity_check(self) -> str:
        return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    # ------------------------------------------------------------------ writing

    @contextmanager
    def transaction(self, after: int | None = None) -> Iterator[Txn]:
        """BEGIN IMMEDIATE ... COMMIT. Commit errors reach the caller as JournalError."""
        if self.readonly:
            msg = f"journal {self.path!r} is open read-only"
            raise JournalError(msg)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            msg = f"cannot start a write on journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc
        txn = Txn(self)
        try:
            yield txn
            self._commit()
        except BaseException:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise

    def _commit(self) -> None:
        try:
            self._conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            msg = f"commit to journal {self.path!r} failed: {exc}"
            raise JournalError(msg) from exc
        if self.purge_pending:  # an earlier erasure's truncation did not complete
            with suppress(JournalError):
                self._purge()


def _create(path: str, synchronous: str) -> None:
    """Make a new journal at ``path`` atomically: built under a name of its own, then linked
    into place, so a process opening ``path`` at the same moment never finds it empty or
    half made (whoever links first wins; the others open that one)."""
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.new"
    try:
        made = SqliteJournal.__new__(SqliteJournal)
        try:
            made._setup(tmp, synchronous, readonly=False)
        except JournalError as exc:  # named by the path asked for, not the file made first
            folder = os.path.dirname(os.path.abspath(path))
            why = (str(exc.__cause__ or exc) if os.path.isdir(folder)
                   else f"{folder!r} is a file, not a folder" if os.path.exists(folder)
                   else f"its folder {folder!r} does not exist")
            msg = f"cannot create journal {path!r}: {why}"
            raise JournalError(msg) from None
        made.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: not atomic, but rare
            if not os.path.exists(path):
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm"):
            with suppress(OSError):
                os.unlink(leftover)


def _check_file(path: str) -> None:
    """An existing empty file is a journal cut to nothing (or not a journal): refuse it
    rather than start a new memory there. A write-ahead log beside it still counts. A
    folder is named as such (SQLite says only that it cannot open it)."""
    if os.path.isdir(path):
        msg = f"{path!r} is a folder, not a journal file; pass the path of a file in it"
        raise JournalError(msg)
    try:
        size = os.path.getsize(path)
    except OSError:
        return  # a new journal
    wal = path + "-wal"
    if size == 0 and not (os.path.exists(wal) and os.path.getsize(wal) > 0):
        msg = (f"journal {path!r} is an empty file: a journal cut to nothing, or not a "
               "journal; pass a path that does not exist to create a new memory")
        raise JournalCorrupt(msg)


def _like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
