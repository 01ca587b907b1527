"""The journal on PostgreSQL: one memory shared by processes on many hosts.

The same rows and hash chain as the SQLite journal. Appends are serialised in the database
(a transaction-scoped advisory lock taken before reading the tail), so concurrent writers on
any host extend one chain; triggers refuse UPDATE and DELETE. A memory learns of other
writers' commits by asking for the last seq before an answer (one query: no notification
that may arrive late, no listener thread taking the CPU from the writer that holds the
lock). A lost connection fails the write with a JournalError
(the transaction is rolled back by the server, so the write is in the chain or not at all);
the next call reconnects. The connection is in autocommit mode: a read is one statement and
one round trip (no transaction to end after it, and psycopg keeps its prepared statements,
which a rollback after every read discarded: a slot's events took 1 ms to read, 0.2 ms
now); a write and a snapshot open their transaction with an explicit BEGIN.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import JournalError
from .base import FORMAT, READABLE, Row, Txn, format_refusal
from .codec import GENESIS, NewEvent, content_hash, index_fields
from .slotindex import IndexedJournal, PostgresDb, SlotIndex, body_entries
from .slotindex import entries as index_entries

if TYPE_CHECKING:
    from ..values import Fact

__all__ = ["PostgresJournal"]

T = TypeVar("T")

_LOCK_KEY = 0x746B6A31  # pg_advisory_xact_lock key: one chain per database
_PAGE = 5_000  # rows per read while replaying
_TRIGGER_BODY = """
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.seq = OLD.seq AND OLD.kind IN ('fact', 'audit', 'rule', 'outcome')
       AND NEW.kind = OLD.kind
       AND NEW.recorded_at = OLD.recorded_at AND NEW.prev_hash = OLD.prev_hash
       AND NEW.hash = OLD.hash AND starts_with(NEW.body, '{"$erased":') THEN
        RETURN NEW;  -- an erasure: the event's body becomes its placeholder
    END IF;
    RAISE EXCEPTION 'truthkeeper journal is append-only';
END; """
_CHAINED_BODY = f"""
BEGIN
    IF NEW.prev_hash IS DISTINCT FROM (CASE WHEN NEW.seq = 1 THEN '{GENESIS}'
            ELSE (SELECT hash FROM events WHERE seq = NEW.seq - 1) END) THEN
        RAISE EXCEPTION 'truthkeeper journal: an event must chain from its hash';
    END IF;
    RETURN NEW;
END; """
# The database refuses an event that does not chain from the one before it (a writer whose
# idea of the tail is not the journal's gets an error, and nothing is appended); a row-level
# BEFORE trigger sees the rows its statement inserted before it.
# A write of plain facts decided without the tail (Ledger.write(fast=True)): chained here,
# under the writers' lock, in the statement that appends it, so the lock is held for no
# round trip to the client. Refused (NULL, nothing appended) when an event other than a
# fact or an audit entry came after ``clean``: only those commute with the write's facts.
# Each row is [kind, recorded_at, body, sha256(body)]; a recorded_at at or before the tail's
# is moved just past it (transaction times increase along the chain); the hash is
# codec.event_hash's. The slot index is extended as _APPEND does (slots' seqs as offsets).
_APPEND_FACTS_BODY = f"""
DECLARE
    t_seq bigint; t_hash text; t_ra bigint; r json; ra bigint; h text;
    ras bigint[] := '{{}}'; first bigint;
BEGIN
    PERFORM pg_advisory_xact_lock({_LOCK_KEY});  -- each statement below sees what came first
    SELECT seq, hash, recorded_at INTO t_seq, t_hash, t_ra FROM events
        ORDER BY seq DESC LIMIT 1;
    IF t_seq IS NULL OR EXISTS (SELECT 1 FROM events WHERE seq > clean AND seq <= t_seq
                                AND kind NOT IN ('fact', 'audit')) THEN
        RETURN NULL;
    END IF;
    first := t_seq + 1;
    FOR r IN SELECT value FROM json_array_elements(rows) LOOP
        ra := greatest((r->>1)::bigint, t_ra + 1);
        t_seq := t_seq + 1;
        h := encode(sha256(convert_to(t_hash || '|' || t_seq || '|' || (r->>0) || '|' || ra
                                      || '|' || (r->>3), 'UTF8')), 'hex');
        INSERT INTO events(seq, kind, recorded_at, body, prev_hash, hash)
            VALUES (t_seq, r->>0, ra, r->>2, t_hash, h);
        t_hash := h; t_ra := ra; ras := ras || ra;
    END LOOP;
    IF to_regclass('tk_index_state2') IS NOT NULL THEN
        WITH ok AS (SELECT 1 FROM tk_index_state2 WHERE seq = first - 1),
        sl AS (INSERT INTO tk_index_slot(slot, seq)
               SELECT s->>0, first + (s->>1)::bigint FROM json_array_elements(slots) s
               WHERE EXISTS (SELECT 1 FROM ok) ON CONFLICT DO NOTHING),
        ky AS (INSERT INTO tk_index_key(key, slot)
               SELECT s->>0, s->>1 FROM json_array_elements(keys) s
               WHERE EXISTS (SELECT 1 FROM ok) ON CONFLICT DO NOTHING)
        UPDATE tk_index_state2 SET seq = t_seq, hash = t_hash WHERE seq = first - 1;
    END IF;
    RETURN json_build_object('first', first, 'ras', to_json(ras), 'hash', t_hash);
END; """
_SCHEMA = f"""
SELECT pg_advisory_xact_lock({_LOCK_KEY});
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    kind TEXT NOT NULL,
    recorded_at BIGINT NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE OR REPLACE FUNCTION truthkeeper_append_only() RETURNS trigger AS $${_TRIGGER_BODY}$$
LANGUAGE plpgsql;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'events_append_only') THEN
        CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION truthkeeper_append_only();
    END IF;
END $$;
CREATE OR REPLACE FUNCTION truthkeeper_chained() RETURNS trigger AS $${_CHAINED_BODY}$$
LANGUAGE plpgsql;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'events_chained') THEN
        CREATE TRIGGER events_chained BEFORE INSERT ON events
        FOR EACH ROW EXECUTE FUNCTION truthkeeper_chained();
    END IF;
END $$;
CREATE OR REPLACE FUNCTION truthkeeper_append_facts(clean bigint, rows json, slots json,
    keys json) RETURNS json AS $${_APPEND_FACTS_BODY}$$ LANGUAGE plpgsql;
COMMENT ON TABLE events IS 'truthkeeper journal format {FORMAT}';
"""
# What an open reads in one round trip: whether the table is there, its mark, and whether
# the schema is complete and current (else a writable open runs _SCHEMA, which takes the
# writers' lock and writes the catalog: not on every open)
_STATE = """SELECT to_regclass('events') IS NOT NULL,
    obj_description(to_regclass('events'), 'pg_class'),
    EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'events_append_only'
            AND tgrelid = to_regclass('events')),
    (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('truthkeeper_append_only()')),
    (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure(
        'truthkeeper_append_facts(bigint, json, json, json)')),
    EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'events_chained'
            AND tgrelid = to_regclass('events')),
    (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('truthkeeper_chained()'))"""
_PAGE_AFTER = ("SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
               "WHERE seq > %s ORDER BY seq LIMIT %s")
_APPEND_FACTS = "SELECT truthkeeper_append_facts(%s, %s::json, %s::json, %s::json)"
_PIPELINED_MAX = 1 << 20  # bytes: a larger append goes on its own, outside the pipeline
_MARK = "truthkeeper journal"  # the table comment: the mark, then " format N"
# The rows go as one JSON text each (arrays of arrays): building it is one json.dumps,
# where psycopg's array adapters took a quarter of a single-fact write's time under the lock.
_INSERT_EVENTS = """
    ev AS (INSERT INTO events(seq, kind, recorded_at, body, prev_hash, hash)
           SELECT (r->>0)::bigint, r->>1, (r->>2)::bigint, r->>3, r->>4, r->>5
           FROM json_array_elements(%(rows)s::json) r
           RETURNING seq)"""
_APPEND_UNINDEXED = f"""WITH {_INSERT_EVENTS}
SELECT count(*) FROM ev"""
# The index is extended only when it covers every event before these (as SlotIndex.add):
# the condition reads the state as it was before this statement, as every part does.
_APPEND = f"""WITH {_INSERT_EVENTS},
    ok AS (SELECT 1 FROM tk_index_state2 WHERE seq = %(before)s),
    sl AS (INSERT INTO tk_index_slot(slot, seq)
           SELECT r->>0, (r->>1)::bigint FROM json_array_elements(%(slots)s::json) r
           WHERE EXISTS (SELECT 1 FROM ok) ON CONFLICT DO NOTHING),
    ky AS (INSERT INTO tk_index_key(key, slot)
           SELECT r->>0, r->>1 FROM json_array_elements(%(keys)s::json) r
           WHERE EXISTS (SELECT 1 FROM ok) ON CONFLICT DO NOTHING),
    st AS (UPDATE tk_index_state2 SET seq = %(last_seq)s, hash = %(last_hash)s
           WHERE EXISTS (SELECT 1 FROM ok))
SELECT count(*) FROM ev"""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the installation
        msg = ("the PostgreSQL journal needs psycopg 3: pip install 'truthkeeper[postgres]' "
               f"({exc})")
        raise JournalError(msg) from exc
    return psycopg


class PostgresJournal(IndexedJournal):
    """An append-only event log in one PostgreSQL database (table ``events``), with the
    slot index (:mod:`.slotindex`) in three more tables, for memories opened lazily.

    Parameters
    ----------
    dsn
        A libpq connection string or URL, e.g. ``postgresql://user@host:5432/db``.
    readonly
        Open without writing.
    connect_timeout
        Seconds to wait for the server.
    """

    def __init__(self, dsn: str, *, readonly: bool = False,
                 connect_timeout: float = 10.0) -> None:
        self.path = _redact(dsn)
        self.dsn = dsn
        self.readonly = readonly
        self._timeout = connect_timeout
        self._lock = threading.RLock()
        self._conn: Any = None
        self._closed = False
        self._in_txn = False
        self._read_ahead: tuple[int, list[Row]] | None = None
        """The first page of events after a seq, read as a write took the lock."""
        self._queued: tuple[str, dict[str, Any]] | None = None
        """A write's append, sent with its commit (or before its next statement)."""
        self._connect()
        try:
            exists, comment, trigger, body, fast, chained, chain_body = self._run(
                lambda c: c.execute(_STATE).fetchone())
            if exists or readonly:
                self._check_table(exists, comment)  # never touch another application's
            current = (comment == f"{_MARK} format {FORMAT}" and trigger
                       and body == _TRIGGER_BODY and fast == _APPEND_FACTS_BODY
                       and chained and chain_body == _CHAINED_BODY)
            self.fast = not readonly  # _SCHEMA made the function current
            if not readonly and not current:
                self._run(lambda c: c.execute(_SCHEMA), commit=True)
                if self.tail()[0] == 0:  # a new journal is indexed from its first event on
                    with self.transaction() as txn:
                        if txn.seq == 0:
                            self._slot_index(PostgresDb(self._conn)).rebuild(iter(()))
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ connection

    def _connect(self) -> None:
        psycopg = _psycopg()
        try:
            self._conn = psycopg.connect(self.dsn, connect_timeout=max(1, int(self._timeout)),
                                         autocommit=True)
        except psycopg.Error as exc:
            msg = _redact(self.dsn, f"cannot connect to the journal at {self.path}: {exc}")
            raise JournalError(msg) from exc

    def _ensure(self) -> Any:
        if self._closed:
            msg = f"journal {self.path} is closed"
            raise JournalError(msg)
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._connect()
        return self._conn

    def _run(self, fn: Any, *, commit: bool = False) -> Any:
        psycopg = _psycopg()
        with self._lock:
            conn = self._ensure()
            if self._in_txn:  # inside a write: its transaction, its lock
                self._flush()
                return fn(conn)
            try:
                if commit:  # its statements in one transaction
                    with conn.transaction():
                        return fn(conn)
                return fn(conn)  # autocommit: each statement sees the newest commits
            except psycopg.Error as exc:
                msg = _redact(self.dsn, f"journal {self.path}: {exc}")
                raise JournalError(msg) from exc

    def _check_table(self, exists: bool, comment: object) -> None:
        if not exists:
            msg = f"{self.path} holds no truthkeeper journal (no table events)"
            raise JournalError(msg)
        comment = comment if isinstance(comment, str) else ""
        # the bare mark was written before formats were marked here, by format 2 (a format
        # 1 journal would fail its chain check)
        version = "2" if comment == _MARK else comment.removeprefix(f"{_MARK} format ")
        if not (version.isascii() and version.isdigit()):
            msg = (f"the table events at {self.path} is not a truthkeeper journal; use "
                   "another database")
            raise JournalError(msg)
        if int(version) not in READABLE:  # a writable open marks it FORMAT (_SCHEMA)
            raise JournalError(format_refusal(self.path, int(version)))

    def close(self) -> None:
        self._closed = True
        with self._lock, contextlib.suppress(Exception):
            if self._conn is not None:
                self._conn.close()

    # ------------------------------------------------------------------ rows

    def _select(self, after_seq: int) -> list[Row]:
        return list(self._select_iter(after_seq))

    def _select_iter(self, after_seq: int) -> Iterator[Row]:
        """The rows after ``after_seq`` in pages of ``_PAGE`` (a replay or a rebuild never
        holds the whole journal)."""
        def q(c: Any) -> list[Row]:
            rows: list[Row] = c.execute(_PAGE_AFTER, (last, _PAGE)).fetchall()
            return rows

        last = after_seq
        while True:
            ahead, self._read_ahead = self._read_ahead, None
            page = ahead[1] if ahead is not None and ahead[0] == last and self._in_txn \
                else self._run(q)
            yield from page
            if len(page) < _PAGE:
                return
            last = page[-1][0]

    def _first_row(self) -> Row | None:
        row: Row | None = self._run(lambda c: c.execute(
            "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events WHERE seq = 1"
        ).fetchone())
        return row

    def _insert(self, rows: list[Row], facts: Mapping[int, Fact] | None = None) -> None:
        """The rows, their slot index entries (when the index covers every event before
        them) and the index's position, in one statement, sent with the commit (or before the
        write's next statement)."""
        psycopg = _psycopg()
        if not rows:
            return
        self._flush()  # an earlier append of this write (the index reads what it wrote)
        try:
            idx = self._slot_index(PostgresDb(self._conn))
            if not self._indexed:
                self._indexed = idx.exists() or None  # another process may create it later
            slots, keys, last = idx.entries_for(rows, facts) if self._indexed else ([], [], None)
            self._queued = (_APPEND if self._indexed else _APPEND_UNINDEXED, {
                "rows": _json(rows), "before": rows[0][0] - 1, "slots": _json(slots),
                "keys": _json(keys), "last_seq": None if last is None else last[0],
                "last_hash": None if last is None else last[1]})
        except psycopg.Error as exc:
            msg = f"write to journal {self.path} failed: {exc}"
            raise JournalError(msg) from exc

    def _index_read(self, fn: Callable[[SlotIndex], T]) -> T:
        out: T = self._run(lambda c: fn(self._slot_index(PostgresDb(c))))
        return out

    def append_facts(self, clean: int, events: Sequence[NewEvent],
                     ) -> tuple[int, list[int], str] | None:
        """Append fact and audit events (kind, recorded_at, body text, and optionally the
        Fact of a fact event) chained in the
        database by one statement (its own transaction: it takes the writers' lock, so the
        lock is held for no round trip and no work here): the first event's seq, every
        event's recorded_at (moved past the tail's where it was not later) and the last
        event's hash, or None (nothing appended) when an event other than a fact or an
        audit entry came after ``clean``."""
        if self.readonly:
            msg = f"journal {self.path} is open read-only"
            raise JournalError(msg)
        rows: list[tuple[str, int, str, str]] = []
        slots: list[tuple[str, int]] = []
        keys: dict[str, str] = {}
        for i, event in enumerate(events):
            kind, ra, text = event[0], event[1], str(event[2])
            rows.append((kind, ra, text, content_hash(text)))
            slot, entries = index_entries(kind, text, _no_lookup) if len(event) < 4 else \
                body_entries(kind, index_fields(event[3]), _no_lookup)
            slots.append((slot, i))
            for k, v in entries:
                keys.setdefault(k, v)
        params = (clean, _json(rows), _json(slots), _json(list(keys.items())))
        if sum(len(x) for x in params[1:]) > _PIPELINED_MAX:
            return None  # a large batch: the pipeline could stall (transaction() sends it)
        with self._lock:
            conn = self._ensure()
            with self._committing(conn):  # one autocommit statement: it takes the lock
                out = conn.execute(_APPEND_FACTS, params).fetchone()[0]
        if out is None:
            return None
        return int(out["first"]), [int(x) for x in out["ras"]], str(out["hash"])

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        psycopg = _psycopg()
        with self._lock:
            conn = self._ensure()
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            except psycopg.Error as exc:
                msg = _redact(self.dsn, f"journal {self.path}: {exc}")
                raise JournalError(msg) from exc
            self._in_txn = True  # every read below runs in this one transaction
            try:
                yield
            except psycopg.Error as exc:
                msg = _redact(self.dsn, f"journal {self.path}: {exc}")
                raise JournalError(msg) from exc
            finally:
                self._in_txn = False
                _abort(conn)

    def reader(self) -> PostgresJournal:
        return PostgresJournal(self.dsn, readonly=True,
                               connect_timeout=self._timeout)

    def reader_spec(self) -> dict[str, Any]:
        return {"dsn": self.dsn, "timeout": self._timeout}

    def _index_write(self, fn: Callable[[SlotIndex], T]) -> T:
        if self._in_txn:
            self._flush()
            return fn(self._slot_index(PostgresDb(self._conn)))
        with self.transaction():
            return fn(self._slot_index(PostgresDb(self._conn)))

    def _update_body(self, seq: int, body: str, naming: dict[str, Any] | None = None) -> None:
        psycopg = _psycopg()
        self._flush()
        try:
            self._slot_index(PostgresDb(self._conn)).erased(seq, body, naming)  # before: it reads
            self._conn.execute("UPDATE events SET body = %s WHERE seq = %s", (body, seq))
        except psycopg.Error as exc:
            msg = f"erasure in journal {self.path} failed: {exc}"
            raise JournalError(msg) from exc

    def _purge(self) -> None:
        """VACUUM (outside a transaction, so on its own connection): the old row versions
        hold the erased bodies. A failure leaves them to autovacuum, never fails the
        erasure that committed."""
        psycopg = _psycopg()
        with contextlib.suppress(psycopg.Error), psycopg.connect(
                self.dsn, autocommit=True, connect_timeout=max(1, int(self._timeout))) as c:
            c.execute("VACUUM events")

    def version_after_write(self, seq: int) -> object:
        return seq  # a later commit makes max(seq) larger: the next read still sees it

    def version(self) -> object:
        """The last event's seq (one query)."""
        return self._run(lambda c: c.execute("SELECT max(seq) FROM events").fetchone()[0])

    def tail(self) -> tuple[int, str, int]:
        def q(c: Any) -> Any:
            return c.execute("SELECT seq, hash, recorded_at FROM events "
                             "ORDER BY seq DESC LIMIT 1").fetchone()

        row = self._run(q)
        if row is None:
            return 0, GENESIS, 0
        return int(row[0]), str(row[1]), int(row[2])

    @contextlib.contextmanager
    def transaction(self, after: int | None = None) -> Iterator[Txn]:
        """One write: the advisory lock serialises writers across hosts; commit or nothing.

        The lock and the first page of events after ``after`` go in one round trip (the
        statements are pipelined: the read starts once the lock is held, so it sees every
        commit before it); the append waits to go with the commit in another. A write
        holds the lock for two round trips."""
        if self.readonly:
            msg = f"journal {self.path} is open read-only"
            raise JournalError(msg)
        psycopg = _psycopg()
        with self._lock:
            conn = self._ensure()
            try:
                with conn.pipeline():
                    conn.execute("BEGIN")
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                    if after is not None:
                        self._read_ahead = (after, conn.execute(_PAGE_AFTER, (after, _PAGE))
                                            .fetchall())
            except psycopg.Error as exc:
                self._read_ahead = None
                _abort(conn)
                msg = f"cannot start a write on journal {self.path}: {exc}"
                raise JournalError(msg) from exc
            self._in_txn = True
            try:
                with self._committing(conn):
                    txn = Txn(self)
                    yield txn
                    if self._queued is not None and sum(
                            len(v) for v in self._queued[1].values() if isinstance(v, str)
                    ) > _PIPELINED_MAX:
                        # a message of megabytes in the pipeline stalled for ever, both ends
                        # waiting (psycopg #685; seen at 24 MB with conn.commit() in the
                        # pipeline; COMMIT as a statement took 60 MB): one more round trip
                        self._send_queued(conn)
                    with conn.pipeline():
                        self._send_queued(conn)
                        done = conn.execute("COMMIT")
                    if done.statusmessage != "COMMIT":  # the server's answer to a COMMIT of a
                        # failed transaction is ROLLBACK, with no error: never acknowledge it
                        msg = (f"commit to journal {self.path} failed: a statement of the write "
                               "failed, so the server rolled it back")
                        raise JournalError(msg)
            finally:
                self._in_txn = False
                self._read_ahead = self._queued = None

    @contextlib.contextmanager
    def _committing(self, conn: Any) -> Iterator[None]:
        """A write's commit: a database error is the write's JournalError, and any error
        ends the transaction (taken back)."""
        psycopg = _psycopg()
        try:
            yield
        except psycopg.Error as exc:
            _abort(conn)
            msg = f"commit to journal {self.path} failed: {exc}"
            raise JournalError(msg) from exc
        except BaseException:
            _abort(conn)
            raise

    def _send_queued(self, conn: Any) -> None:
        """Send the append that waits for the commit (``_insert``)."""
        queued, self._queued = self._queued, None
        if queued is not None:
            conn.execute(*queued)

    def _flush(self) -> None:
        """Before another statement of a write: the append waiting for the commit first
        (its errors are the write's)."""
        if self._queued is not None:
            psycopg = _psycopg()
            try:
                self._send_queued(self._conn)
            except psycopg.Error as exc:
                msg = f"write to journal {self.path} failed: {exc}"
                raise JournalError(msg) from exc


def _no_lookup(key: str) -> str | None:
    """A fact's or an audit entry's index entries look nothing up."""
    msg = f"an event of the fast append looked up {key!r}"
    raise AssertionError(msg)


def _abort(conn: Any) -> None:
    """End the transaction open on ``conn``, if any, taking it back (a broken connection's
    is gone with it)."""
    psycopg = _psycopg()
    with contextlib.suppress(psycopg.Error):
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")


def _json(rows: list[Any]) -> str:
    """Rows as a JSON array of arrays (the strings as they are: the journal's texts are
    already valid UTF-8)."""
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def _redact(dsn: str, text: str | None = None) -> str:
    """``text`` (default: the DSN itself) without the DSN's password, in every DSN form: a
    URL's ``user:PW@``, a ``password=`` key (quoted or not) or query parameter."""
    import re

    out = dsn if text is None else text
    secrets = set(re.findall(r"://[^:/@]+:([^@]*)@", dsn))
    secrets |= {a or b for a, b in re.findall(r"password\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s&]+))",
                                            dsn)}
    for pw in sorted((x for x in secrets if x), key=len, reverse=True):
        out = out.replace(pw, "***")
    return out


def redact(dsn: str, text: str | None = None) -> str:
    """:func:`_redact` for callers outside this module (the CLI prints what it opened)."""
    return _redact(dsn, text) if dsn.startswith(("postgresql://", "postgres://")) or \
        "password" in dsn else (dsn if text is None else text)
