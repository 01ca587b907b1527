"""Erasure reaches the process too: after ``erase``, nothing the memory holds in Python or
in SWI-Prolog still holds an erased value, subject, text or meta (DESIGN: "Erasure is of
every byte: ... caches"), whatever the memory read before it."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from truthkeeper import Candidate, Memory


def _reachable_strings_with(needle: str, skip: set[int]) -> list[str]:
    """Each live Python object (walking into untracked tuples and dicts too) that holds a
    str or bytes containing ``needle`` (case-insensitive), as a short description."""
    low, hits, seen = needle.lower(), [], set(skip)
    seen.add(id(hits))
    stack = gc.get_objects()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        try:
            refs = gc.get_referents(o)
        except Exception:  # noqa: BLE001 - an object that cannot list its referents
            continue
        for r in refs:
            if isinstance(r, str):
                if low in r.lower():
                    hits.append(f"{type(o).__name__}: {r[:80]!r}")
            elif isinstance(r, (bytes, bytearray)):
                if low.encode() in bytes(r).lower():
                    hits.append(f"{type(o).__name__}: bytes")
            elif isinstance(r, (tuple, dict, list, set, frozenset)) and not gc.is_tracked(r):
                stack.append(r)
    return hits


def _prolog_holding(part: str, needle: str) -> tuple[list[str], list[str]]:
    """Atoms, and clauses of dynamic predicates, that contain ``needle``; asked for by
    ``part`` (a piece of it), so that asking creates no atom holding the needle itself."""
    import janus_swi as janus

    janus.query_once("garbage_collect_clauses, garbage_collect_atoms")
    atoms = janus.query_once(
        "findall(_A, (current_atom(_A), sub_atom_icasechk(_A, _, P)), As)", {"P": part})["As"]
    clauses = janus.query_once(
        "findall(_S, (current_module(_M), _M \\== user, current_predicate(_M:_N/_Ar), "
        "functor(_H, _N, _Ar), \\+ predicate_property(_M:_H, imported_from(_)), "
        "predicate_property(_M:_H, dynamic), catch(clause(_M:_H, _B), _, fail), "
        "term_string(_H-_B, _S), sub_atom_icasechk(_S, _, P)), Ss)", {"P": part})["Ss"]
    low = needle.lower()
    return [f"atom {a!r}" for a in atoms if low in str(a).lower()], \
        [f"clause {c[:100]}" for c in clauses if low in str(c).lower()]


def _add(mem: Memory, secret: str) -> None:
    """A person's slots, with the secret in the subject, the values, texts and meta."""
    who = "bob " + secret
    mem.add_rule("has_city(S) :- holds(S, city, _)")
    for i, src in enumerate(["w1", "w2", "w3"]):
        mem.add(who, "mood", ["happy", "sad", "angry"][i], source=src,
                valid_from="2026-01-01")
        mem.add(who, "city", f"x{secret}{i}", source=src, valid_from="2026-01-01",
                text=f"said {secret}", meta={"note": "m" + secret})
    mem.add("ana", "city", "lisbon", source="w1", valid_from="2026-01-01")


def _read_and_erase(mem: Memory, secret: str, *, whole: bool = True,
                    meanwhile: Callable[[], object] | None = None) -> None:
    """Read and decide about the person's slots in every way (``whole``: with the calls
    that read every slot in; ``meanwhile``: called amid them), then erase the person.
    Nothing of the secret stays in this function's frame."""
    who = "bob " + secret
    if whole:
        mem.learn_from_agreement()
        mem.beliefs()
        if meanwhile is not None:
            meanwhile()
        mem.graph()
    mem.decide(who, "mood")
    mem.decide(who, "city")
    mem.current(who, "city")
    mem.history(who, "city")
    mem.as_of(who, "city", valid_at="2026-02-01")
    mem.filter([Candidate(who, "city", f"y{secret}", "2025-02-01"),
                Candidate("ana", "city", "porto", "2025-01-01")], query="where?")
    for f in mem.history(who, "city"):
        mem.why(f.id)
    # an outcome and the owner's confirmation: the memory holds the slots as confirmed,
    # and a confirmation links the slot (before, both kept the subject after the erasure)
    mem.record_outcome(mem.history(who, "mood")[0].id, correct=True)
    assert mem.confirm(who, "city", f"x{secret}1") == 3  # the three heads labelled
    assert len(mem.erase(subject=who)) == 7  # the confirmation's fact too
    mem.current("ana", "city")  # a read after it, of what stays
    if whole:
        mem.beliefs()


@pytest.mark.parametrize("where", ["memory", "sqlite", "reopened lazily"])
def test_an_erased_persons_data_stays_nowhere_in_the_process(where: str,
                                                             tmp_path: Path) -> None:
    """Before the fix, what stayed after ``erase(subject=...)``: an in-memory journal's
    original event bodies (value, text, meta), the normalised keys' cache (the subject), a
    lazily opened memory's list of the slots it read (the subject), and in Prolog the
    emptied slots' frontiers (the subject), the belief tables' answers and the atoms of
    the erased values until SWI-Prolog's next collection, or for good in a lazily opened
    memory (held by the atom a thread unregistered last, or by a dead local-stack word)."""
    secret = uuid.uuid4().hex  # no other test holds it
    path = None if where == "memory" else tmp_path / "m.db"
    mem = Memory(path, categories={"mood": ["happy", "sad", "angry"]})
    _add(mem, secret)
    if where == "reopened lazily":
        mem.close()
        mem = Memory(path)
    _read_and_erase(mem, secret, whole=where != "reopened lazily")
    if where == "reopened lazily":  # the slots were read in one by one
        assert mem._store.lazy is not None and not mem._store.lazy.done
    part = secret[3:12]  # asked for by a piece of it
    for _ in range(3):  # what is garbage goes (a cycle can hold another one's last ref)
        gc.collect()
    skip: set[Any] = {id(secret), id(part)}
    assert _reachable_strings_with(secret, skip) == []
    atoms, clauses = _prolog_holding(part, secret)
    # before: a lazily loaded slot's erased value stayed in SWI-Prolog's atom table, held
    # by a dead word of the local stack that atom collection scans (prolog/forget.pl)
    assert (atoms, clauses) == ([], [])
    assert mem.current("ana", "city").value == "lisbon" and mem.verify().ok
    mem.close()


def test_another_memory_closed_amid_the_reads_leaves_the_erasure_complete() -> None:
    """Closing a memory retracts its clauses of the predicates every memory uses. Before,
    when one was closed while this memory read the person's slots, SWI-Prolog's clause
    collection left one of this memory's erased clauses in place for good, and with it
    the subject's atom (every time; in the test suite, a memory another test left open,
    closed by Python's collector amid this one's reads)."""
    secret = uuid.uuid4().hex
    other = Memory(categories={"mood": ["happy", "sad", "angry"]})
    _add(other, uuid.uuid4().hex)
    other.beliefs()
    mem = Memory(categories={"mood": ["happy", "sad", "angry"]})
    _add(mem, secret)
    _read_and_erase(mem, secret, meanwhile=other.close)
    part = secret[3:12]
    for _ in range(3):
        gc.collect()
    assert _prolog_holding(part, secret) == ([], [])
    assert mem.current("ana", "city").value == "lisbon"
    mem.close()


def test_another_handles_erasure_caught_up_with_leaves_nothing_in_this_one(
        tmp_path: Path) -> None:
    """A second memory on the same journal that read the person's slots, then caught up
    with the first one's erasure, keeps nothing of them either (before: the names of the
    slots it had read in; an erased value's atom, as in any lazily opened memory)."""
    secret = uuid.uuid4().hex
    first = Memory(tmp_path / "m.db", categories={"mood": ["happy", "sad", "angry"]})
    _add(first, secret)
    second = Memory(tmp_path / "m.db")
    _look(second, secret)
    first.erase(subject="bob " + secret)
    assert second.current("ana", "city").value == "lisbon"  # caught up
    part = secret[3:12]
    for _ in range(3):
        gc.collect()
    assert _reachable_strings_with(secret, {id(secret), id(part)}) == []
    assert _prolog_holding(part, secret) == ([], [])
    assert second.history("bob " + secret, "city")[0].status == "erased"
    first.close()
    second.close()


def _look(mem: Memory, secret: str) -> None:
    who = "bob " + secret
    mem.current(who, "city")
    mem.decide(who, "city")
    mem.history(who, "city")


_EXPLAINED = """
import gc, sys, uuid
from pathlib import Path
from tests.test_erasure_residue import _prolog_holding, _reachable_strings_with
from truthkeeper import Memory


def main(path, lazy):
    secret = uuid.uuid4().hex
    mem = Memory(path)
    view = mem.scope("user:carol")
    view.add("carol " + secret, "pet", "cat" + secret, source="chat", valid_from="2026-01-01")
    view.add_rule("has_pet(X) :- holds(X, pet, _)")
    if lazy:
        mem.close()
        mem = Memory(path)
        view = mem.scope("user:carol")
    assert len(view.beliefs()) == 1 and view.graph().number_of_nodes() == 2
    assert "has_pet" in str(view.why(view.beliefs()[0]))
    assert len(mem.erase(scope="user:carol")) == 1
    part = secret[3:12]
    for _ in range(3):
        gc.collect()
    print(_reachable_strings_with(secret, {id(secret), id(part)}), _prolog_holding(part, secret))


main(Path(sys.argv[1]), sys.argv[2] == "lazy")
"""


@pytest.mark.parametrize("lazy", ["full", "lazy"])
def test_a_belief_explained_about_an_erased_subject_leaves_nothing_in_prolog(
        tmp_path: Path, lazy: str) -> None:
    """``graph()`` and ``why`` of a belief proved it for the subject itself: a table of
    its own, whose calls of the facts it read kept the erased subject's atom after the
    erasure (before: every time). In a fresh process, as an agent's would be: what else
    a process did before can keep an atom of the same name for reasons of its own (see
    ``prolog/forget.pl``)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _EXPLAINED, str(tmp_path / "m.db"), lazy],
                         capture_output=True, text=True, cwd=root, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[] ([], [])"


@pytest.mark.parametrize("how", ["scope", "subject"])
def test_a_lazily_opened_memory_forgets_the_names_of_the_slots_a_view_asked_about(
        tmp_path: Path, how: str) -> None:
    """A lazily opened memory lists the slots it read in, the empty ones a view asked
    about too (the shared layer's under the same subject, a subject nothing holds). An
    erasure of the scope, or of the subject, left their names listed (before)."""
    secret = uuid.uuid4().hex
    who, nobody = "dan " + secret, "eve " + secret
    mem = Memory(tmp_path / "m.db")
    mem.scope("user:dan").add(who, "pet", f"cat{secret}", source="chat")
    mem.close()
    mem = Memory(tmp_path / "m.db")
    view = mem.scope("user:dan")
    assert view.current(who, "pet").value == f"cat{secret}"  # reads the shared slot too
    assert view.current(nobody, "pet").status == "unknown"
    if how == "scope":
        assert len(mem.erase(scope="user:dan")) == 1
    else:
        assert len(view.erase(subject=who)) == 1
        assert view.erase(subject=nobody) == []
    part = secret[3:12]
    for _ in range(3):
        gc.collect()
    assert _reachable_strings_with(secret, {id(secret), id(part)}) == []
    mem.close()
