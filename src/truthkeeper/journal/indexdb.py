"""The slot index's SQL on each backend's connection (:mod:`.slotindex` runs the same
statements through either): SQLite's, and PostgreSQL's, whose placeholders and collation
differ."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["PostgresDb", "SqliteDb"]


class SqliteDb:
    """The index's SQL on a SQLite connection (text compares by bytes)."""

    schema = """
    CREATE TABLE IF NOT EXISTS tk_index_slot (
        slot TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (slot, seq)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS tk_index_key (
        key TEXT PRIMARY KEY, slot TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS tk_index_state2 (
        one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL)
    """

    find = "instr"
    """The function that finds a text in another (1-based, 0 when absent)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def many(self, sql: str, params: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, params)

    def stream(self, sql: str) -> Iterator[tuple[Any, ...]]:
        """The rows of a query, read in pages (a whole table never held at once)."""
        cur = self.conn.execute(sql)
        while page := cur.fetchmany(5_000):
            yield from page

    def has_table(self, name: str) -> bool:
        return bool(self.rows("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                              "name = ?", (name,))[0][0])


class PostgresDb:
    """The index's SQL on a psycopg connection (slots compare by bytes: ``COLLATE "C"``;
    PostgreSQL text cannot hold NUL, so no key with one is ever looked up)."""

    schema = """
    CREATE TABLE IF NOT EXISTS tk_index_slot (
        slot TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (slot, seq));
    CREATE TABLE IF NOT EXISTS tk_index_key (
        key TEXT COLLATE "C" PRIMARY KEY, slot TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS tk_index_state2 (
        one INTEGER PRIMARY KEY CHECK (one = 1), seq BIGINT NOT NULL, hash TEXT NOT NULL)
    """

    find = "strpos"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.execute(sql.replace("?", "%s"), params)
        return cur.fetchall() if cur.description is not None else []

    def many(self, sql: str, params: Iterable[Sequence[Any]]) -> None:
        batch = list(params)
        if batch:
            with self.conn.cursor() as cur:
                cur.executemany(sql.replace("?", "%s"), batch)

    def stream(self, sql: str) -> Iterator[tuple[Any, ...]]:
        """The rows of a query through a server-side cursor, in pages."""
        # a server-side cursor lives in a transaction (the connection is in autocommit
        # mode; inside a write this is a savepoint)
        with self.conn.transaction(), self.conn.cursor(name="tk_index_stream") as cur:
            cur.execute(sql)
            while page := cur.fetchmany(5_000):
                yield from page

    def has_table(self, name: str) -> bool:
        return self.rows("SELECT to_regclass(?)", (name,))[0][0] is not None
