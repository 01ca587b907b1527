"""``truthkeeper eval temporal``: chain heads, as_of and history on real facts that changed.

Data sets are found by their layout, whatever their folders are called: a folder of dated
snapshots (JSON files whose names hold a month and a year, ``Dec2021-singlehop.json``) is
PAT-like; one with ``raw_data*.jsonl`` files of timelines is SituatedQA-like.

PAT-Questions: dated snapshots (Dec 2021, Dec 2023, Mar 2024) of the same questions; each
snapshot's answer becomes a fact valid from the first of the snapshot's month. The chain head
must be the last snapshot's answer, ``as_of`` halfway between two snapshots the earlier one's,
and ``history`` every answer in order. SituatedQA (temporal split): each
question's timeline of previous/current answers with start years becomes facts valid from those
years, and its dated as-of questions check ``as_of(valid_at=...)``. Facts are added in a random
order (one batch) to check that insertion order does not matter.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..memory import Memory

__all__ = ["evaluate_pat", "evaluate_situatedqa", "evaluate_temporal", "snapshots"]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATED = re.compile(r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*[-_ ]?(\d{4})",
                    re.IGNORECASE)


def snapshots(folder: Path) -> list[tuple[Path, datetime]]:
    """The JSON files of ``folder`` whose names hold a month and a year, oldest first, each
    with the first of its month (UTC)."""
    out = []
    for p in sorted(folder.glob("*.json")):
        m = _DATED.search(p.stem)
        if m:
            month = _MONTHS.index(m.group(1).lower()) + 1
            out.append((p, datetime(int(m.group(2)), month, 1, tzinfo=UTC)))
    return sorted(out, key=lambda x: x[1])


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _answer(values: list[str]) -> str:
    return " | ".join(sorted({v.strip() for v in values if v and v.strip()}))


def evaluate_pat(folder: Path, *, seed: int = 0) -> dict[str, Any]:
    dated = snapshots(folder)
    if len(dated) < 2:
        msg = f"{folder} holds fewer than two dated snapshots"
        raise ValueError(msg)
    snaps = [(json.loads(p.read_text(encoding="utf-8")), _iso(at)) for p, at in dated]
    if not all(isinstance(s, dict) for s, _ in snaps):
        msg = "a snapshot is not a JSON object of questions"
        raise ValueError(msg)
    questions = sorted(set.intersection(*(set(s) for s, _ in snaps)))
    # as_of halfway between two snapshots must give the earlier one's answer
    between = [_iso(a + (b - a) / 2) for (_, a), (_, b) in pairwise(dated)]
    facts, expected = [], {}
    for q in questions:
        answers = [_answer(s[q].get("text answers") or []) for s, _ in snaps]
        if not all(answers):
            continue
        expected[q] = answers
        for (_, at), a in zip(snaps, answers, strict=True):
            facts.append({"subject": q, "attribute": "answer", "value": a,
                          "source": "wikidata", "tier": "verified", "valid_from": at})
    if not expected:
        msg = "no question has an answer in every snapshot"
        raise ValueError(msg)
    random.Random(seed).shuffle(facts)
    with Memory(policy="temporal", protected_tiers=()) as mem:
        t = time.perf_counter()
        mem.add_many(facts)
        load = time.perf_counter() - t
        head_ok = asof_ok = hist_ok = 0
        t = time.perf_counter()
        for q, answers in expected.items():
            head_ok += mem.current(q, "answer").value == answers[-1]
            asof_ok += all(mem.as_of(q, "answer", valid_at=at).value == a
                           for at, a in zip(between, answers, strict=False))
            hist_ok += [f.value for f in mem.history(q, "answer")] == answers
        query = time.perf_counter() - t
    n = len(expected)
    changed = {f"changed_{a.year}_{b.year}": sum(x[i] != x[i + 1] for x in expected.values())
               for i, ((_, a), (_, b)) in enumerate(pairwise(dated))}
    return {"questions": len(expected), "facts": len(facts),
            "snapshots": [_iso(at) for _, at in dated], **changed,
            "head_accuracy": head_ok / n, "as_of_accuracy": asof_ok / n,
            "history_in_order": hist_ok / n, "load_seconds": load, "query_seconds": query}


def evaluate_situatedqa(folder: Path, *, seed: int = 0) -> dict[str, Any]:
    facts, checks, heads = [], [], {}
    # the dev and test splits where they are (train is left out: it repeats their kind at
    # five times the size); else every raw_data file
    paths = [p for split in ("dev", "test") for p in folder.glob(f"raw_data*.{split}.jsonl")]
    for path in paths or sorted(folder.glob("raw_data*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            q = f"{rec['id']}"
            timeline: dict[int, str] = {}
            for tl in rec.get("timelines") or []:
                for side in ("prev", "cur"):
                    year = (tl.get(f"{side}_start") or {}).get("year")
                    ans = _answer(tl.get(f"{side}_answers") or [])
                    if year and ans:
                        timeline.setdefault(int(year), ans)
            if len(set(timeline.values())) < 2 or len(timeline) != len(set(timeline.values())):
                continue  # keep questions whose answer changed, one answer per start year
            for year, ans in timeline.items():
                facts.append({"subject": q, "attribute": "answer", "value": ans,
                              "source": "situatedqa", "tier": "verified",
                              "valid_from": f"{year:04d}-01-01T00:00:00Z"})
            heads[q] = timeline[max(timeline)]
            for pair in rec.get("context_answer_pairs") or []:
                date = str(pair.get("date", ""))
                if date.isdigit() and len(date) == 4 and int(date) >= min(timeline):
                    want = [y for y in sorted(timeline) if y <= int(date)][-1]
                    checks.append((q, f"{date}-12-31T00:00:00Z", timeline[want],
                                   _answer(pair.get("answers") or [])))
    if not heads:
        msg = "no question has a timeline whose answer changed"
        raise ValueError(msg)
    random.Random(seed).shuffle(facts)
    with Memory(policy="temporal", protected_tiers=()) as mem:
        t = time.perf_counter()
        mem.add_many(facts)
        load = time.perf_counter() - t
        head_ok = sum(mem.current(q, "answer").value == a for q, a in heads.items())
        asof_ok = sum(mem.as_of(q, "answer", valid_at=at).value == want
                      for q, at, want, _ in checks)
        gold_ok = sum(mem.as_of(q, "answer", valid_at=at).value == gold
                      for q, at, _, gold in checks)
    return {"questions": len(heads), "facts": len(facts), "as_of_checks": len(checks),
            "head_accuracy": head_ok / max(len(heads), 1),
            "as_of_accuracy_vs_timeline": asof_ok / max(len(checks), 1),
            "as_of_agreement_with_dataset_answers": gold_ok / max(len(checks), 1),
            "load_seconds": load}


def evaluate_temporal(root: Path) -> dict[str, Any]:
    """``root`` itself and every folder under it (sorted by name) that is a data set, found
    by its layout."""
    out: dict[str, Any] = {}
    for folder in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
        run = (evaluate_pat if len(snapshots(folder)) >= 2 else evaluate_situatedqa
               if any(folder.glob("raw_data*.jsonl")) else None)
        if run is None:
            continue
        try:
            out[folder.name] = run(folder)
        except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
            # a file that is not JSON, or JSON not shaped as the layout says
            print(f"skipping {folder.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out
