"""``truthkeeper eval temporal``: chain heads, as_of and history on real facts that changed.

PAT-Questions: three dated snapshots (Dec 2021, Dec 2023, Mar 2024) of the same questions; each
snapshot's answer becomes a fact valid from the snapshot date. SituatedQA (temporal split): each
question's timeline of previous/current answers with start years becomes facts valid from those
years, and its dated as-of questions check ``as_of(valid_at=...)``. Facts are added in a random
order (one batch) to check that insertion order does not matter.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from ..memory import Memory

__all__ = ["evaluate_pat", "evaluate_situatedqa", "evaluate_temporal"]

_PAT = (("Dec2021-singlehop.json", "2021-12-01T00:00:00Z"),
        ("Dec2023-singlehop.json", "2023-12-01T00:00:00Z"),
        ("March2024-singlehop.json", "2024-03-01T00:00:00Z"))


def _answer(values: list[str]) -> str:
    return " | ".join(sorted({v.strip() for v in values if v and v.strip()}))


def evaluate_pat(folder: Path, *, seed: int = 0) -> dict[str, Any]:
    snaps = [(json.loads((folder / f).read_text(encoding="utf-8")), at) for f, at in _PAT]
    questions = sorted(set(snaps[0][0]) & set(snaps[1][0]) & set(snaps[2][0]))
    facts, expected = [], {}
    for q in questions:
        answers = [_answer(s[q].get("text answers") or []) for s, _ in snaps]
        if not all(answers):
            continue
        expected[q] = answers
        for (_, at), a in zip(snaps, answers, strict=True):
            facts.append({"subject": q, "attribute": "answer", "value": a,
                          "source": "wikidata", "tier": "verified", "valid_from": at})
    random.Random(seed).shuffle(facts)
    with Memory(policy="temporal", protected_tiers=()) as mem:
        t = time.perf_counter()
        mem.add_many(facts)
        load = time.perf_counter() - t
        head_ok = asof_ok = hist_ok = 0
        t = time.perf_counter()
        for q, (a21, a23, a24) in expected.items():
            head_ok += mem.current(q, "answer").value == a24
            asof_ok += (mem.as_of(q, "answer", valid_at="2022-06-01T00:00:00Z").value == a21
                        and mem.as_of(q, "answer", valid_at="2024-01-15T00:00:00Z").value == a23)
            hist_ok += [f.value for f in mem.history(q, "answer")] == [a21, a23, a24]
        query = time.perf_counter() - t
    n = len(expected)
    return {"questions": n, "facts": len(facts),
            "changed_2021_2023": sum(a != b for a, b, _ in expected.values()),
            "changed_2023_2024": sum(b != c for _, b, c in expected.values()),
            "head_accuracy": head_ok / n, "as_of_accuracy": asof_ok / n,
            "history_in_order": hist_ok / n, "load_seconds": load, "query_seconds": query}


def evaluate_situatedqa(folder: Path, *, seed: int = 0) -> dict[str, Any]:
    facts, checks, heads = [], [], {}
    for split in ("dev", "test"):
        path = folder / f"raw_data_temp.{split}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
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
    out: dict[str, Any] = {}
    if (root / "pat").is_dir():
        out["pat"] = evaluate_pat(root / "pat")
    if (root / "situatedqa").is_dir():
        out["situatedqa"] = evaluate_situatedqa(root / "situatedqa")
    return out
