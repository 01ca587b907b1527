"""Loaders for truth-discovery data (many sources claim open values; gold for some items),
found by their layout, not by their folder's name.

Two layouts (``find_truth_sets``):

- **a table** (``flights_raha``'s): a folder with ``dirty.csv`` (one row per source and
  entity: the claims) and ``clean.csv`` (the same rows with the true values). The source is
  the column named ``src``/``source``/``site``/``provider`` (else the first); the entity the
  first other column (skipping ``tuple_id``/``id``/``index``/``row``); every other column is
  an attribute, and an item is an ``entity|column`` cell.
- **claims and gold** (``book_yin2008``'s): a folder with a gold file (its name holds
  ``golden``, ``gold`` or ``truth``; ``item, value``) and a claims file (the largest other
  ``.txt``/``.tsv``/``.csv``, not ``silver``): ``source, item, ..., value``, the value in the
  last column of the rows with the file's usual number of columns; tab-separated, or
  comma-separated when the first line has no tab.

Matching rules, chosen per column (or per claims file) by what most of its non-empty cells
look like, and applied to claims and gold alike before anything votes:

- **authors** (cells with letters and no digits: lists of names): the set of lower-case
  alphabetic words of two or more letters (initials, punctuation and order dropped),
  written sorted; only for claims-and-gold files, where values are lists of names;
- **times** (an ``h:mm`` in most cells): the first ``h:mm`` to 24-hour ``HH:MM``
  (``a.m.``/``p.m.``, or an ``a``/``p`` right after the minutes; none: as written);
- **numbers** (most cells parse as one, after dropping ``,``, ``$``, ``%`` and spaces): the
  number written without trailing zeros (``1,234.50`` -> ``1234.5``);
- **text**: lower-case, inner white space collapsed, surrounding punctuation dropped.

Under every rule a cell with no such value ("Not Available", "Contact Airline", "n/a",
empty) is no claim. One claim per (source, item): the first row. The gold value of an item is
the first gold row's.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["Claims", "TruthSet", "find_truth_sets", "load_books", "load_claims_and_gold",
           "load_flights", "load_table", "load_truth_set", "normalise_authors",
           "normalise_number", "normalise_text", "normalise_time"]

Claims = dict[str, list[tuple[str, str]]]
"""item -> [(source, normalised value)], in reading order."""

TruthSet = tuple[Claims, dict[str, str], dict[str, str]]
"""Claims, gold (item -> normalised value) and each item's matching rule, the attribute its
facts are stored under (a table's columns of one rule share it)."""

_WORD = re.compile(r"[a-z]{2,}")
_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])?")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_NOTHING = {"", "-", "--", "?", "n/a", "na", "nan", "none", "null", "unknown",
            "not available"}
_SOURCE_COLUMNS = ("src", "source", "site", "provider")
_ROW_COLUMNS = ("tuple_id", "id", "index", "row")


def normalise_authors(text: str) -> str | None:
    """An author list as its sorted set of lower-case words of 2+ letters, or None."""
    words = sorted(set(_WORD.findall(text.lower())) - {"not", "available"})
    return " ".join(words) if words else None


def normalise_time(text: str) -> str | None:
    """The first h:mm in ``text`` as 24-hour HH:MM, or None."""
    m = _TIME.search(text)
    if m is None:
        return None
    h, mm, ap = int(m.group(1)), m.group(2), m.group(3)
    if ap == "p" and h < 12:
        h += 12
    elif ap == "a" and h == 12:
        h = 0
    return f"{h:02d}:{mm}"


def normalise_number(text: str) -> str | None:
    """A cell that is one number (``,``, ``$``, ``%`` and spaces dropped) without trailing
    zeros, or None."""
    s = re.sub(r"[,$%\s]", "", text)
    if not _NUMBER.fullmatch(s):
        return None
    x = float(s)
    if not math.isfinite(x):  # 1e400
        return None
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def normalise_text(text: str) -> str | None:
    """Lower-case, inner white space collapsed, surrounding punctuation dropped; None for an
    empty or "not available" cell."""
    s = " ".join(text.lower().split()).strip(" .,;:'\"()[]")
    return None if s in _NOTHING else s


RULES: dict[str, Callable[[str], str | None]] = {
    "authors": normalise_authors, "time": normalise_time, "number": normalise_number,
    "text": normalise_text}
"""The matching rules by name; the name is the attribute the facts are stored under."""


def choose_rule(cells: Iterable[str], *, names: bool) -> str:
    """The rule most of the non-empty cells fit (:data:`RULES`), ``names`` allowed or not."""
    seen = [c for c in cells if normalise_text(c) is not None]
    if not seen:
        return "text"
    half = len(seen) / 2
    if sum(_TIME.search(c) is not None for c in seen) > half:
        return "time"
    if sum(normalise_number(c) is not None for c in seen) > half:
        return "number"
    if names and sum(not any(ch.isdigit() for ch in c) and normalise_authors(c) is not None
                     for c in seen) > half:
        return "authors"
    return "text"


def find_truth_sets(root: Path) -> list[Path]:
    """``root`` itself when it is in one of the two layouts, and every folder under it that
    is (sorted by name)."""
    inside = [p for p in sorted(root.iterdir()) if p.is_dir() and _layout(p) is not None]
    return ([root] if _layout(root) is not None else []) + inside


def _layout(folder: Path) -> tuple[Path, Path] | None:
    """(claims file, gold file) of a folder in either layout, or None."""
    if (folder / "dirty.csv").is_file() and (folder / "clean.csv").is_file():
        return folder / "dirty.csv", folder / "clean.csv"
    files = [p for p in sorted(folder.iterdir())
             if p.is_file() and p.suffix.lower() in (".txt", ".tsv", ".csv")]
    gold = next((p for word in ("golden", "gold", "truth") for p in files
                 if word in p.stem.lower()), None)
    others = [p for p in files if p != gold and not any(
        w in p.stem.lower() for w in ("golden", "gold", "truth", "silver"))]
    if gold is None or not others:
        return None
    return max(others, key=lambda p: p.stat().st_size), gold


def load_truth_set(folder: Path) -> TruthSet:
    """Claims, gold and matching rule of a folder in either layout."""
    found = _layout(folder)
    if found is None:
        msg = f"{folder} holds neither dirty.csv and clean.csv nor a claims and a gold file"
        raise ValueError(msg)
    claims, gold = found
    if claims.name == "dirty.csv":
        return load_table(folder)
    return load_claims_and_gold(claims, gold)


def _columns(header: list[str]) -> tuple[int, int]:
    low = [h.strip().lower() for h in header]
    src = next((low.index(n) for n in _SOURCE_COLUMNS if n in low), 0)
    key = next((i for i in range(len(low)) if i != src and low[i] not in _ROW_COLUMNS), -1)
    return src, key


def load_table(folder: Path) -> TruthSet:
    """A table folder (``dirty.csv``, ``clean.csv``); items are ``entity|column`` cells,
    each read under its column's rule."""
    with open(folder / "dirty.csv", encoding="utf-8-sig", errors="replace", newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        return {}, {}, {}
    header, body = rows[0], rows[1:]
    src, key = _columns(header)
    if key < 0:  # no column names the entity
        return {}, {}, {}
    attrs = [i for i in range(len(header)) if i not in (src, key)]
    rules = {a: choose_rule((r[a] for r in body if len(r) > a), names=False) for a in attrs}
    claims: Claims = defaultdict(list)
    rule_of: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for r in body:
        if len(r) <= key or len(r) <= src:
            continue
        for a in attrs:
            v = RULES[rules[a]](r[a]) if len(r) > a else None
            item = f"{r[key]}|{header[a]}"
            if v is not None and (r[src], item) not in seen:
                seen.add((r[src], item))
                claims[item].append((r[src], v))
                rule_of[item] = rules[a]
    gold: dict[str, str] = {}
    with open(folder / "clean.csv", encoding="utf-8-sig", errors="replace", newline="") as f:
        clean = list(csv.reader(f))
    if clean and (ckey := _columns(clean[0])[1]) >= 0:
        cols = {h: i for i, h in enumerate(clean[0])}
        for r in clean[1:]:
            for a in attrs:
                i = cols.get(header[a])
                if i is None or len(r) <= max(i, ckey):
                    continue
                v = RULES[rules[a]](r[i])
                if v is not None:
                    gold.setdefault(f"{r[ckey]}|{header[a]}", v)
    return dict(claims), gold, rule_of


def _tab_rows(path: Path) -> list[list[str]]:
    """The rows of a tab-separated file, or of a comma-separated one (no tab in its first
    line)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        first = f.readline()
        f.seek(0)
        if "\t" in first or "," not in first:
            return [line.rstrip("\r\n").split("\t") for line in f if line.strip()]
        return [r for r in csv.reader(f) if any(c.strip() for c in r)]


def load_claims_and_gold(claims_file: Path, gold_file: Path) -> TruthSet:
    """A claims file (``source, item, ..., value``, tab-separated) and its gold file
    (``item, value``)."""
    rows = _tab_rows(claims_file)
    if rows and rows[0][0].strip().lower() in _SOURCE_COLUMNS:  # a header row
        rows = rows[1:]
    width = Counter(len(r) for r in rows).most_common(1)[0][0] if rows else 0
    rows = [r for r in rows if len(r) == width and width >= 3]
    rule = choose_rule((r[-1] for r in rows), names=True)
    norm = RULES[rule]
    claims: Claims = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for r in rows:
        src, item, v = r[0], r[1].strip(), norm(r[-1])
        if v is None or (src, item) in seen:
            continue
        seen.add((src, item))
        claims[item].append((src, v))
    gold: dict[str, str] = {}
    for r in _tab_rows(gold_file):  # a header row names no item with claims: ignored
        if len(r) >= 2 and (v := norm(r[-1])) is not None:
            gold.setdefault(r[0].strip(), v)
    return dict(claims), gold, dict.fromkeys(claims, rule)


def load_books(folder: Path) -> tuple[Claims, dict[str, str]]:
    """Claims and gold of ``book_yin2008`` (``book.txt``, ``book_golden.txt``)."""
    claims, gold, _ = load_claims_and_gold(folder / "book.txt", folder / "book_golden.txt")
    return claims, gold


def load_flights(folder: Path) -> tuple[Claims, dict[str, str]]:
    """Claims and gold of ``flights_raha``; items are ``flight|attribute`` cells."""
    claims, gold, _ = load_table(folder)
    return claims, gold
