"""Where the evaluations' data sets are, and generated stand-ins for a fresh clone.

The full public data sets (crowd labelling, truth discovery, temporal questions) are not
part of the repository. ``data_root`` finds them: an explicit folder (``--data``), else the
``TRUTHKEEPER_DATA`` environment variable. Where they are absent, ``write_samples`` writes
small *generated* sets in the same layouts (seeded, so every run draws the same), so the
notebooks run from a fresh clone and draw their figures; their figures then describe the
generated sets, not the public ones. :data:`WHERE` names where to get the real ones.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

__all__ = ["WHERE", "DataMissing", "data_root", "notebook_data", "write_samples"]

WHERE = """\
The public data sets are not shipped with truthkeeper. Get them from their authors and lay
them out as one folder with crowd/, truth_discovery/ and temporal/ under it:
  crowd/            zheng et al.'s crowd_truth_infer datasets (answer.csv + truth.csv per set),
                    crowd-kit's datasets (crowd_labels.csv + gt.csv), Snow et al. 2008's
                    *.standardized.tsv (rte, temp)
  truth_discovery/  Yin et al. 2008's books (book.txt + book_golden.txt), the flights excerpt
                    of Li et al. 2012 used by Raha/Baran (dirty.csv + clean.csv)
  temporal/         PAT-Questions snapshots (pat/), SituatedQA raw_data (situatedqa/)
then pass the folder with --data DIR or set TRUTHKEEPER_DATA=DIR."""


class DataMissing(FileNotFoundError):
    """No data folder was named, or the named one does not exist."""


def data_root(explicit: str | os.PathLike[str] | None, folder: str) -> Path:
    """The folder of one kind of data set (``"crowd"``, ``"truth_discovery"``,
    ``"temporal"``): ``explicit`` (a folder of that kind, or one holding it), else
    ``$TRUTHKEEPER_DATA/<folder>``.

    Raises
    ------
    DataMissing
        When neither names an existing folder; the message says where to get the data.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "crowd").mkdir()
    >>> data_root(d, "crowd") == d / "crowd"
    True
    """
    if explicit is not None:
        root = Path(explicit)
        if (root / folder).is_dir():
            return root / folder
        if root.is_dir():
            return root
        raise DataMissing(f"no data folder at {root}\n{WHERE}")
    env = os.environ.get("TRUTHKEEPER_DATA")
    if env and (Path(env) / folder).is_dir():
        return Path(env) / folder
    where = f"TRUTHKEEPER_DATA={env} has no {folder}/" if env else "no --data DIR given"
    raise DataMissing(f"{where}\n{WHERE}")


def notebook_data(dest: str | os.PathLike[str]) -> tuple[Path, bool]:
    """The notebooks' data folder and whether it holds the real sets: ``TRUTHKEEPER_DATA``
    when set, else generated samples written under ``dest``.

    Examples
    --------
    >>> import tempfile
    >>> _, real = notebook_data(tempfile.mkdtemp())
    >>> real == bool(os.environ.get("TRUTHKEEPER_DATA"))
    True
    """
    env = os.environ.get("TRUTHKEEPER_DATA")
    if env and Path(env).is_dir():
        return Path(env), True
    return write_samples(dest), False


def write_samples(dest: str | os.PathLike[str], seed: int = 0) -> Path:
    """Write generated stand-ins for the public sets under ``dest`` and return it.

    - ``crowd/sample_birds/`` (answer.csv, truth.csv): 120 items, 2 classes, 25 workers of
      accuracy .55-.95 (a few adversarial), 8 answers per item;
    - ``crowd/sample_temp.standardized.tsv`` (Snow et al.'s columns): 150 items, 2 classes;
    - ``truth_discovery/sample_books/`` (claims.tsv, golden.txt): author lists claimed by 30
      stores, some of which drop or reorder authors;
    - ``truth_discovery/sample_flights/`` (dirty.csv, clean.csv): times claimed by 12 sites.

    Examples
    --------
    >>> import tempfile
    >>> from truthkeeper.reliability.crowd import find_sets
    >>> [p.name for p in find_sets(write_samples(tempfile.mkdtemp()) / "crowd")]
    ['sample_birds', 'sample_temp.standardized.tsv']
    """
    root = Path(dest)
    rng = np.random.default_rng(seed)
    _crowd_folder(root / "crowd" / "sample_birds", rng)
    _crowd_snow(root / "crowd" / "sample_temp.standardized.tsv", rng)
    _books(root / "truth_discovery" / "sample_books", rng)
    _flights(root / "truth_discovery" / "sample_flights", rng)
    return root


def _answers(rng: np.random.Generator, n_items: int, n_workers: int, per_item: int,
             ) -> tuple[list[int], list[tuple[int, int, int]]]:
    truth = [int(x) for x in rng.integers(0, 2, n_items)]
    acc = rng.uniform(0.55, 0.95, n_workers)
    acc[: max(1, n_workers // 10)] = 0.3  # a few workers who are mostly wrong
    rows = []
    for i in range(n_items):
        for w in rng.choice(n_workers, per_item, replace=False):
            right = rng.random() < acc[w]
            rows.append((i, int(w), truth[i] if right else 1 - truth[i]))
    return truth, rows


def _crowd_folder(folder: Path, rng: np.random.Generator) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    truth, rows = _answers(rng, 120, 25, 8)
    with open(folder / "answer.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "worker", "answer"])
        w.writerows((f"q{i}", f"w{k}", a) for i, k, a in rows)
    with open(folder / "truth.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "truth"])
        w.writerows((f"q{i}", t) for i, t in enumerate(truth))


def _crowd_snow(path: Path, rng: np.random.Generator) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    truth, rows = _answers(rng, 150, 30, 10)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["!amt_annotation_ids", "!amt_worker_ids", "orig_id", "response", "gold"])
        w.writerows((f"a{n}", f"W{k}", f"{i}_0", a, truth[i])
                    for n, (i, k, a) in enumerate(rows))


_NAMES = ["knuth, donald", "aho, alfred", "ullman, jeffrey", "sethi, ravi", "date, chris",
          "gray, jim", "reuter, andreas", "stonebraker, michael", "codd, edgar", "liskov, barbara",
          "lamport, leslie", "hopper, grace", "kernighan, brian", "ritchie, dennis",
          "pike, rob", "tanenbaum, andrew"]


def _books(folder: Path, rng: np.random.Generator) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    stores = [f"store{k}" for k in range(30)]
    quality = rng.uniform(0.4, 0.95, len(stores))
    claims, gold = [], []
    for b in range(60):
        isbn = f"{1000000000 + b * 7919}"
        authors = [str(a) for a in rng.choice(_NAMES, int(rng.integers(1, 4)), replace=False)]
        gold.append((isbn, "; ".join(authors)))
        for k in rng.choice(len(stores), int(rng.integers(4, 12)), replace=False):
            if rng.random() < quality[k]:
                claimed = list(authors)
                rng.shuffle(claimed)  # another order: the same set of names
            elif len(authors) > 1:
                claimed = authors[:-1]  # an author dropped
            else:
                claimed = [str(rng.choice(_NAMES))]
            claims.append((stores[k], isbn, f"Book {b}", "; ".join(claimed)))
    with open(folder / "claims.tsv", "w", encoding="utf-8") as fh:
        fh.writelines("\t".join(r) + "\n" for r in claims)
    with open(folder / "golden.txt", "w", encoding="utf-8") as fh:
        fh.writelines("\t".join(r) + "\n" for r in gold)


def _flights(folder: Path, rng: np.random.Generator) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sites = [f"site{k}" for k in range(12)]
    quality = rng.uniform(0.5, 0.97, len(sites))
    cols = ["scheduled_dept", "actual_dept"]
    dirty, clean = [], []
    for n in range(40):
        flight = f"XX-{100 + n}-AAA-BBB"
        true = {c: int(rng.integers(0, 24 * 60)) for c in cols}
        for k, site in enumerate(sites):
            row = {c: true[c] if rng.random() < quality[k]
                   else (true[c] + int(rng.integers(5, 90))) % (24 * 60) for c in cols}
            dirty.append([site, flight, *(_clock(row[c]) for c in cols)])
            clean.append([site, flight, *(_clock(true[c]) for c in cols)])
    for name, rows in (("dirty.csv", dirty), ("clean.csv", clean)):
        with open(folder / name, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["src", "flight", *cols])
            w.writerows(rows)


def _clock(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return f"{(h - 1) % 12 + 1}:{m:02d} {'a.m.' if h < 12 else 'p.m.'}"
