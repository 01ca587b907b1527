"""Loaders for crowd-labelling data sets (read at run time from a folder the user names).

A zheng-style folder holds ``answer.csv`` (item, worker, answer) and ``truth.csv`` (item,
truth), or crowd-kit's ``crowd_labels.csv`` and ``gt.csv``. The columns are found by their
header's names (``question``/``item``/``task``/``id``, ``worker``/``annotator``,
``answer``/``label``/``response``; ``truth``/``gold``/``true_label``), in that order when
the header does not name them (so crowd-kit's ``worker, task, label`` reads too). A Snow et
al. file (``*.standardized.tsv``, or any ``.tsv`` with their columns) has the columns
``!amt_annotation_ids, !amt_worker_ids, orig_id, response, gold``.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CrowdData", "find_sets", "halves", "load_set", "load_sets"]


@dataclass(frozen=True)
class CrowdData:
    """Answers as integer arrays, with the names they index."""

    name: str
    items: list[str]
    workers: list[str]
    classes: list[str]
    item_idx: np.ndarray      # (n_answers,)
    worker_idx: np.ndarray    # (n_answers,)
    label: np.ndarray         # (n_answers,) class index
    gold: dict[int, int]      # item index -> class index

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_workers(self) -> int:
        return len(self.workers)

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def halves(data: CrowdData, by: str, seed: int = 0) -> tuple[CrowdData, CrowdData]:
    """``data`` cut in two at random (``seed``): by ``"items"`` (each half with its items'
    answers and gold) or by ``"workers"`` (each half with its workers' answers, every item
    they answered): two data sets of the same kind, which no setting was chosen on."""
    n = data.n_items if by == "items" else data.n_workers
    first = np.random.default_rng(seed).permutation(n) < n // 2
    side = first[data.item_idx] if by == "items" else first[data.worker_idx]
    return _subset(data, side, f"{data.name}/{by}_0"), _subset(data, ~side, f"{data.name}/{by}_1")


def _subset(data: CrowdData, keep: np.ndarray, name: str) -> CrowdData:
    """The answers ``keep`` marks, their items and workers indexed anew."""
    items, ii = np.unique(data.item_idx[keep], return_inverse=True)
    workers, ww = np.unique(data.worker_idx[keep], return_inverse=True)
    at = {int(old): new for new, old in enumerate(items)}
    return CrowdData(name, [data.items[i] for i in items], [data.workers[w] for w in workers],
                     data.classes, ii, ww, data.label[keep],
                     {at[i]: c for i, c in data.gold.items() if i in at})


def _build(name: str, rows: list[tuple[str, str, str]], truth: dict[str, str]) -> CrowdData:
    items: dict[str, int] = {}
    workers: dict[str, int] = {}
    classes = sorted({r[2] for r in rows} | set(truth.values()), key=_class_key)
    cls = {c: i for i, c in enumerate(classes)}
    ii, ww, ll = [], [], []
    for item, worker, answer in rows:
        ii.append(items.setdefault(item, len(items)))
        ww.append(workers.setdefault(worker, len(workers)))
        ll.append(cls[answer])
    gold = {items[i]: cls[t] for i, t in truth.items() if i in items}
    return CrowdData(name, list(items), list(workers), classes, np.array(ii), np.array(ww),
                     np.array(ll), gold)


def _class_key(c: str) -> tuple[int, float | str]:
    try:
        return (0, float(c))
    except ValueError:
        return (1, c)


_ITEM = ("question", "item", "task", "id", "q", "object", "example", "orig_id")
_WORKER = ("worker", "annotator", "performer", "user", "labeler", "worker_id",
           "!amt_worker_ids")
_ANSWER = ("answer", "label", "response", "output")
_TRUTH = ("truth", "gold", "label", "answer", "true_label")


def _pick(header: list[str], *names: tuple[str, ...]) -> list[int]:
    """The columns named by each tuple of ``names`` (the first name found), or the first
    columns in order when a header does not name them all (answer.csv's header names vary:
    question/id, and crowd-kit's files put the worker first)."""
    low = [h.strip().lower().lstrip("\ufeff") for h in header]
    cols = [next((low.index(n) for n in group if n in low), -1) for group in names]
    return cols if -1 not in cols and len(set(cols)) == len(cols) else list(range(len(names)))


ANSWER_FILES = ("answer.csv", "answers.csv", "crowd_labels.csv")
TRUTH_FILES = ("truth.csv", "gold.csv", "gt.csv")
"""A crowd folder's answers and gold, by file name: zheng's (``answer.csv``,
``truth.csv``) or crowd-kit's datasets' (``crowd_labels.csv``, ``gt.csv``)."""


def _first(folder: Path, names: tuple[str, ...]) -> Path:
    return next((folder / n for n in names if (folder / n).is_file()), folder / names[0])


def load_zheng(folder: Path) -> CrowdData:
    with open(_first(folder, ANSWER_FILES), newline="", encoding="utf-8-sig") as fh:
        r = csv.reader(fh)
        i, w, a = _pick(next(r, []), _ITEM, _WORKER, _ANSWER)
        rows = [(rec[i].strip(), rec[w].strip(), rec[a].strip()) for rec in r
                if len(rec) > max(i, w, a) and rec[i].strip()]
    with open(_first(folder, TRUTH_FILES), newline="", encoding="utf-8-sig") as fh:
        r = csv.reader(fh)
        i, t = _pick(next(r, []), _ITEM, _TRUTH)
        truth = {rec[i].strip(): rec[t].strip() for rec in r
                 if len(rec) > max(i, t) and rec[i].strip()}
    return _build(folder.name, rows, truth)


def load_snow(path: Path) -> CrowdData:
    rows, truth = [], {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        r = csv.reader(fh, delimiter="\t")
        col = {h.strip(): i for i, h in enumerate(next(r, []))}
        missing = _SNOW_COLUMNS - set(col)
        if missing:
            msg = f"{path.name} lacks the columns {', '.join(sorted(missing))}"
            raise ValueError(msg)
        for rec in r:
            if len(rec) <= max(col.values()):
                continue
            item = rec[col["orig_id"]].strip()
            rows.append((item, rec[col["!amt_worker_ids"]].strip(), rec[col["response"]].strip()))
            truth[item] = rec[col["gold"]].strip()
    return _build(path.name.removesuffix(".tsv").removesuffix(".standardized"), rows, truth)


def find_sets(root: Path) -> list[Path]:
    """Every data set in root: root itself and the folders under it that hold answers and
    gold (:data:`ANSWER_FILES`, :data:`TRUTH_FILES`), and the Snow et al. files
    (``*.standardized.tsv``, or a ``.tsv`` with their columns)."""
    def zheng(p: Path) -> bool:
        return p.is_dir() and any((p / n).is_file() for n in ANSWER_FILES) and any(
            (p / n).is_file() for n in TRUTH_FILES)

    out = ([root] if zheng(root) else []) + [p for p in sorted(root.iterdir()) if zheng(p)]
    out += [p for p in sorted(root.glob("*.tsv")) if _snow_file(p)]
    return out


_SNOW_COLUMNS = {"!amt_worker_ids", "orig_id", "response", "gold"}


def _snow_file(path: Path) -> bool:
    """A Snow et al. file: ``*.standardized.tsv``, or any ``.tsv`` whose header names the
    worker, item, response and gold columns."""
    if path.name.endswith(".standardized.tsv"):
        return True
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            header = fh.readline().rstrip("\r\n").split("\t")
    except OSError:
        return False
    return {h.strip() for h in header} >= _SNOW_COLUMNS


def load_set(path: Path) -> CrowdData:
    return load_zheng(path) if path.is_dir() else load_snow(path)


def load_sets(root: Path) -> Iterator[CrowdData]:
    """Each data set under ``root`` (:func:`find_sets`) that has answers, a gold label for an
    answered item and two classes or more; the others (and files that do not parse) are
    passed over with a message on stderr."""
    for path in find_sets(root):
        try:
            data = load_set(path)
        except (ValueError, KeyError, IndexError, UnicodeDecodeError) as exc:
            print(f"skipping {path.name}: {exc}", file=sys.stderr)
            continue
        if not len(data.label) or not data.gold or data.n_classes < 2:
            print(f"skipping {path.name}: no answers, no gold label for an answered item, "
                  "or one class only", file=sys.stderr)
            continue
        yield data
