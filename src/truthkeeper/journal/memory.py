"""The journal of an in-memory Memory: the same events and chain, kept in columns.

An event is its kind, its transaction time, its body and its hash; the seq is its
position and the previous hash is the event before's, so neither is kept (a row as
:class:`~.base.Journal` reads it is made when read). The hashes are kept as 32 bytes each,
not 64 hex characters, and the bodies compressed 64 to a block once the block is full
(:class:`_Bodies`): 100,000 fact events take about 9 MB here, 71 MB as tuples.
"""

from __future__ import annotations

import zlib
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .base import Journal, Row, Txn, fact_id
from .codec import GENESIS

if TYPE_CHECKING:
    from ..values import Fact

__all__ = ["MemoryJournal"]

_H = 32  # bytes of one sha256 hash
_BLOCK = 64  # bodies compressed together
_CACHED = 8  # blocks kept decompressed


class _Bodies:
    """The events' body texts by index: the older ones in zlib blocks of ``_BLOCK`` (level
    1: the canonical JSON of 100,000 facts, 28 MB as str, takes about 5 MB; 1.3 us an event
    to compress), the last block's as str. A body rewritten after its block was compressed
    (an erasure's placeholder, a rollback's restore) is kept apart and read first. Reading
    one body decompresses its block (about 30 us); the last ``_CACHED`` blocks read stay
    decompressed, so a sequential read decompresses each block once and an erasure each
    block of its facts once."""

    def __init__(self) -> None:
        self._blocks: list[tuple[bytes, array[int]]] = []  # the text and each body's length
        self._open: list[str] = []
        self._changed: dict[int, str] = {}
        self._dirty: set[int] = set()  # the blocks that bodies in ``_changed`` belong to
        self._cache: OrderedDict[int, list[str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks) * _BLOCK + len(self._open)

    def __getitem__(self, i: int) -> str:
        body = self._changed.get(i)
        if body is not None:
            return body
        k, r = divmod(i, _BLOCK)
        return self._open[r] if k == len(self._blocks) else self._block(k)[r]

    def _block(self, k: int) -> list[str]:
        out = self._cache.get(k)
        if out is not None:
            self._cache.move_to_end(k)
            return out
        blob, lengths = self._blocks[k]
        text, at, out = zlib.decompress(blob).decode(), 0, []
        for n in lengths:
            out.append(text[at:at + n])
            at += n
        self._cache[k] = out
        if len(self._cache) > _CACHED:
            self._cache.popitem(last=False)
        return out

    def __setitem__(self, i: int, body: str) -> None:
        k, r = divmod(i, _BLOCK)
        if k == len(self._blocks):
            self._open[r] = body
            return
        self._changed[i] = body
        self._dirty.add(k)

    def settle(self) -> None:
        """Write the bodies rewritten since the last call into their blocks, so that the
        text they replaced (an erased fact's) is held nowhere: each block once."""
        for k in sorted(self._dirty):
            bodies = list(self._block(k))
            for r in range(_BLOCK):
                bodies[r] = self._changed.pop(k * _BLOCK + r, bodies[r])
            self._blocks[k] = (zlib.compress("".join(bodies).encode(), 1),
                               array("I", map(len, bodies)))
            self._cache[k] = bodies
        self._dirty.clear()

    def append(self, body: str) -> None:
        self._open.append(body)
        if len(self._open) == _BLOCK:
            self._blocks.append((zlib.compress("".join(self._open).encode(), 1),
                                 array("I", map(len, self._open))))
            self._open = []

    def truncate(self, n: int) -> None:
        """Drop the bodies from index ``n`` on (a rolled back transaction's)."""
        k, r = divmod(n, _BLOCK)
        if k < len(self._blocks):
            opened = self._block(k)[:r]  # the block cut into is open again
            for j in range(r):  # with its rewritten bodies in place
                opened[j] = self._changed.pop(k * _BLOCK + j, opened[j])
            self._open = opened
            del self._blocks[k:]
        else:
            del self._open[r:]
        self._cache.clear()
        for i in [i for i in self._changed if i >= n]:
            del self._changed[i]
        self._dirty = {i // _BLOCK for i in self._changed}


class MemoryJournal(Journal):
    """Events in columns; a transaction that raises leaves them as they were."""

    durable = False

    def __init__(self) -> None:
        self._kinds: list[str] = []
        self._ras = array("q")
        self._bodies = _Bodies()
        self._hashes = bytearray()
        self._undo: dict[int, str] | None = None  # bodies a transaction rewrote, as they were
        # built by the first erasure, then kept: where each fact's event is, and which
        # events are not facts (so that later erasures do not read the whole journal)
        self._ids: dict[str, int] | None = None
        self._others: list[int] | None = None

    def _hash(self, i: int) -> str:
        """The hash of the event at index ``i`` (seq ``i + 1``); GENESIS before the first."""
        return GENESIS if i < 0 else self._hashes[_H * i:_H * (i + 1)].hex()

    def _row(self, i: int) -> Row:
        return (i + 1, self._kinds[i], self._ras[i], self._bodies[i], self._hash(i - 1),
                self._hash(i))

    def _select(self, after_seq: int) -> list[Row]:
        return list(self._select_iter(after_seq))

    def _select_iter(self, after_seq: int) -> Iterator[Row]:
        for i in range(max(after_seq, 0), len(self._bodies)):
            yield self._row(i)

    def _insert(self, rows: list[Row], facts: Mapping[int, Fact] | None = None) -> None:
        rows.reverse()  # each row leaves the list as it is stored: a large batch is not
        while rows:     # held twice, as rows and as columns
            row = rows.pop()
            seq, kind, ra, body, _prev, h = row  # Txn chained it: prev is the last hash
            if seq != len(self._bodies) + 1:
                msg = f"event {seq} does not extend the in-memory journal's chain"
                raise AssertionError(msg)  # a bug, never input
            self._kinds.append(kind)
            self._ras.append(ra)
            self._bodies.append(body)
            self._hashes += bytes.fromhex(h)
            if self._ids is not None:
                self._note([row])

    def _note(self, rows: list[Row] | Iterator[Row]) -> None:
        assert self._ids is not None and self._others is not None
        for seq, kind, _ra, body, _p, _h in rows:
            if kind != "fact":
                self._others.append(seq)
            elif (fid := fact_id(body, seq)) is not None:
                self._ids[fid] = seq

    def _scan_fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        if self._ids is None:
            self._ids, self._others = {}, []
            self._note(self._select_iter(0))
        out: dict[str, tuple[int, str]] = {}
        for fid in ids:
            seq = self._ids.get(fid)
            if seq is not None and fact_id(body := self._bodies[seq - 1], seq) == fid:
                out[fid] = (seq, body)
        return out

    def kind_rows(self, kind: str) -> list[tuple[int, str]]:
        if kind == "fact" or self._others is None:
            return super().kind_rows(kind)
        return [(seq, self._bodies[seq - 1]) for seq in self._others
                if self._kinds[seq - 1] == kind]

    def _update_body(self, seq: int, body: str, naming: dict[str, Any] | None = None) -> None:
        if self._undo is not None and seq - 1 not in self._undo:
            self._undo[seq - 1] = self._bodies[seq - 1]
        self._bodies[seq - 1] = body

    def tail(self) -> tuple[int, str, int]:
        n = len(self._bodies)
        if not n:
            return 0, GENESIS, 0
        return n, self._hash(n - 1), max(self._ras[-8:])

    @contextmanager
    def transaction(self, after: int | None = None) -> Iterator[Txn]:
        # what a rollback needs: the length before (appends are cut off) and the bodies the
        # transaction rewrote (an erasure); not a copy of the columns, which made every
        # write cost in proportion to the journal
        n, outer = len(self._bodies), self._undo
        undo: dict[int, str] = {}
        self._undo = undo
        try:
            yield Txn(self)
        except BaseException:
            del self._kinds[n:], self._ras[n:], self._hashes[_H * n:]
            self._bodies.truncate(n)
            self._ids = self._others = None  # built again by the next erasure
            for i, body in undo.items():
                if i < n:
                    self._bodies[i] = body
            raise
        else:
            if outer is not None:  # a nested transaction: the outer one may still roll back
                for i, body in undo.items():
                    outer.setdefault(i, body)
        finally:
            self._undo = outer
        if outer is None:  # committed: what an erasure blanked leaves its blocks
            self._bodies.settle()
