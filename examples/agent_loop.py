"""An agent loop with truthkeeper as its memory, end to end, without a language model.

A scripted "LLM" stands in for the model: it extracts facts from what the user says and
answers from the context it is given. Everything else is what a real agent does:

1. store what the conversation says (the user's statements as tier ``verified``, the
   agent's own guesses as ``agent``, web snippets as ``unverified``), in one scope per user,
   over the company's shared facts (which every user's scope reads through); pets are a set
   (``declare("pet", cardinality="many")``), a job ends when the user leaves it, and the
   user's confirmation settles what the agent got wrong;
2. retrieve text chunks for a question (a keyword retriever over a small document store,
   some of it stale), filter them through the memory, build the prompt from what is left;
3. feed outcomes back: the user says which answers were right; a web source that keeps
   being wrong loses reliability, and the next decision goes against it;
4. stop, and carry on in a new process that reopens the memory file.

Run it:  python examples/agent_loop.py [--db FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

from truthkeeper import Candidate, Memory, Utility

CHUNKS = [  # a vector store would hold these; metadata says which slot each is about
    ("Ana lives in Berlin and works remotely.", "ana", "city", "Berlin", "2024-03-01"),
    ("Ana moved to Lisbon last spring.", "ana", "city", "Lisbon", "2026-04-01"),
    ("The ACME plan costs 100 EUR a month.", "acme", "price", 100, "2025-01-01"),
    ("ACME raised the plan to 135 EUR.", "acme", "price", 135, "2026-06-01"),
    ("Lisbon has mild winters.", None, None, None, None),
]


def scripted_extract(utterance: str) -> list[tuple[str, str, object, bool]]:
    """The "LLM" turning a user's sentence into (subject, attribute, value, present)."""
    out: list[tuple[str, str, object, bool]] = []
    if m := re.search(r"I (?:live|moved) (?:in|to) (\w+)", utterance):
        out.append(("ana", "city", m.group(1), True))
    if m := re.search(r"(?:my|I also have a) (?:cat|dog) (?:is )?called (\w+)", utterance):
        out.append(("ana", "pet", m.group(1), True))
    if m := re.search(r"(\w+) (?:died|is gone)", utterance):
        out.append(("ana", "pet", m.group(1), False))
    if m := re.search(r"I work at (\w+)", utterance):
        out.append(("ana", "employer", m.group(1), True))
    return out


def retrieve(question: str, k: int = 4) -> list[tuple[str, str | None, str | None, object,
                                                      str | None]]:
    """A keyword retriever: the chunks sharing the most words with the question."""
    words = set(re.findall(r"\w+", question.lower()))
    scored = sorted(CHUNKS, key=lambda c: -len(words & set(re.findall(r"\w+", c[0].lower()))))
    return scored[:k]


def build_prompt(mem: Memory, question: str) -> tuple[str, list[str]]:
    """Retrieve, drop what the memory knows to be stale, and build the prompt."""
    chunks = retrieve(question)
    items = [Candidate(s, a, v, vf, tier="unverified", source="docs", text=t)
             if s else t for t, s, a, v, vf in chunks]
    judged = [i for i in items if isinstance(i, Candidate)]
    res = mem.filter(judged, query=question)
    stale = [d.item.text for d in res.dropped]
    context = [t for t, *_ in chunks if t not in stale]
    return "Context:\n- " + "\n- ".join(context) + f"\nQuestion: {question}", stale


def phase_one(db: str) -> None:
    mem = Memory(db, schema={"pet": {"cardinality": "many"}})
    print("== the company's shared facts ==")
    mem.add("acme", "support_hours", "9-17", source="handbook", tier="verified",
            valid_from="2026-01-01")
    ana = mem.scope("user:ana")
    print("  ana reads through to them: acme.support_hours =",
          ana.current("acme", "support_hours").value)
    print("== turn 1: the user talks ==")
    for said, day in [("I live in Berlin", "2024-03-01"), ("my cat is called Tom", "2025-05-01"),
                      ("I also have a dog called Rex", "2025-09-01"),
                      ("I work at Globex", "2025-10-01"), ("I moved to Lisbon", "2026-04-01"),
                      ("Tom died", "2026-05-01")]:
        for s, a, v, present in scripted_extract(said):
            f = ana.add(s, a, v, source="user:ana", tier="verified", valid_from=day, text=said,
                        present=present)
            print(f"  remembered {s}.{a} {'=' if present else 'no longer has'} {v!r} "
                  f"({f.tier}, from {day})")
    print("  ana.city now:", ana.current("ana", "city").value, "| pets:",
          ana.current("ana", "pet").value)
    assert ana.current("ana", "pet").value == ("Rex",)  # Tom left the set, Rex stays
    job = ana.history("ana", "employer")[-1]
    ana.end(job.id, valid_to="2026-07-01")  # "I left Globex in July"
    print("  after 'I left Globex': ana.employer is", ana.current("ana", "employer").status)
    ana.add("ana", "employer", "Initech", source="agent:planner", tier="agent",
            valid_from="2026-08-01")  # the agent's guess from an email signature
    ana.add("ana", "employer", "Hooli", source="web:people-search", tier="unverified",
            valid_from="2026-08-01")
    r = ana.current("ana", "employer")
    print(f"  two guesses: {r.status} (the model leans to {r.best!r}, p={r.best_p:.2f})")
    ana.confirm("ana", "employer", "Initech")  # the user: "yes, I work at Initech now"
    print("  after the user confirms: ana.employer =", ana.current("ana", "employer").value)
    assert ana.current("ana", "employer").value == "Initech"

    print("== turn 2: a question over retrieved context ==")
    prompt, stale = build_prompt(ana, "Where does Ana live?")
    print("  dropped as stale:", stale)
    assert "Ana lives in Berlin and works remotely." in stale
    print("  prompt:\n    " + prompt.replace("\n", "\n    "))

    print("== turn 3: two web sources disagree on the ACME price ==")
    for rnd in range(6):  # every round, the truth comes out later and is fed back
        day = f"2026-0{rnd + 1}-15"
        good = ana.add("acme", f"price_{rnd}", 135, source="web:acme.com", tier="unverified",
                       valid_from=day)
        bad = ana.add("acme", f"price_{rnd}", 99, source="web:deals-blog", tier="unverified",
                      valid_from=day)
        ana.record_outcome(good.id, correct=True)
        ana.record_outcome(bad.id, correct=False)
    rel = {r.source: round(r.mean, 2) for r in ana.reliability()}  # her feedback: her view's
    print("  learned reliability (in ana's view):", rel)
    assert rel["web:deals-blog"] < 0.4 < 0.6 < rel["web:acme.com"]
    mem.close()
    print("== the agent stops ==")


def phase_two(db: str) -> None:
    print("== a new process reopens the memory ==")
    mem = Memory(db)
    ana = mem.scope("user:ana")
    print("  ana.city:", ana.current("ana", "city").value, "| ana.pet:",
          ana.current("ana", "pet").value)
    assert ana.current("ana", "city").value == "Lisbon"
    ana.add("acme", "price", 99, source="web:deals-blog", tier="unverified",
            valid_from="2026-11-01")
    ana.add("acme", "price", 135, source="web:acme.com", tier="unverified",
            valid_from="2026-11-01")
    d = ana.decide("acme", "price", utility=Utility(correct=1, wrong=-4))
    print(f"  decide acme.price: {d.action} {d.value!r} (p={d.p:.2f})")
    assert d.action == "answer" and d.value == 135
    print("== the user asks to be forgotten ==")
    erased = mem.erase(scope="user:ana")
    ok = mem.verify().ok  # the chain, and the slot index against it
    print(f"  erased {len(erased)} facts; chain verifies: {ok}")
    assert ok and ana.about("ana") == {}  # not even the slots' names stay
    print("  the shared facts stay:", ana.current("acme", "support_hours").value)
    assert ana.current("acme", "support_hours").value == "9-17"
    mem.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", help="memory file (default: a temporary one)")
    p.add_argument("--phase", type=int, choices=(1, 2), help=argparse.SUPPRESS)
    args = p.parse_args()
    db = args.db or os.path.join(tempfile.mkdtemp(), "agent.db")
    if args.phase == 2:
        phase_two(db)
        return 0
    phase_one(db)
    sys.stdout.flush()
    return subprocess.call([sys.executable, __file__, "--db", db, "--phase", "2"])


if __name__ == "__main__":
    sys.exit(main())
