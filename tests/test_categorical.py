"""Categorical attributes: declared categories, each source's confusion between them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from truthkeeper import InvalidFact, Memory, PolicyError
from truthkeeper.reliability.calibration import ece
from truthkeeper.results import Utility

GRADES = ["G", "PG", "R", "X"]
ANSWER = Utility(correct=1.0, wrong=0.0, abstain=-1.0)  # always answer: score every item


def _careful(t: int, rng: np.random.Generator) -> int:
    """A careful worker's grade of a film of true grade ``t``: right with .85, else a
    neighbouring grade."""
    return t if rng.random() < 0.85 else int(np.clip(t + rng.choice([-1, 1]), 0, 3))


def _graded(seed: int, n_items: int = 300, n_workers: int = 24,
            per_item: int = 5) -> tuple[list[dict], list[str], list[str]]:
    """Ordinal grades rated by three kinds of worker: lenient (one grade lower with
    probability .5), strict (one grade higher, .5) and careful (:func:`_careful`); five
    workers per film. Returns the facts, the true grades and a reference grade of each
    film: one more careful reading, as a reference is read by someone as good as the best
    of the sources (``ds.reader_perception``)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(4, n_items, p=[0.4, 0.3, 0.2, 0.1])
    facts = []
    for i in range(n_items):
        for w in rng.choice(n_workers, per_item, replace=False):
            t, u = int(truth[i]), rng.random()
            if w % 3 == 0:
                said = max(t - 1, 0) if u < 0.5 else t
            elif w % 3 == 1:
                said = min(t + 1, 3) if u < 0.5 else t
            else:
                said = _careful(t, rng)
            facts.append({"subject": f"f{i}", "attribute": "rating", "value": GRADES[said],
                          "source": f"w{w}", "valid_from": "2026-01-01"})
    reader = np.random.default_rng(seed + 1000)
    reference = [GRADES[_careful(int(t), reader)] for t in truth]
    return facts, [GRADES[t] for t in truth], reference


@pytest.mark.parametrize("seed", [0, 3])
def test_confusion_reads_lenient_and_strict_sources(seed: int, tmp_path: Path) -> None:
    """decide() on a categorical attribute after learning from agreement, against the
    one-coin model of open values on the same facts. Tolerance: accuracy against the truth
    >= .95 and at least .05 above the one-coin model's (4 seeds: .95-.98 against .82-.90).
    p is the probability of the value a reference would confirm, the reference read as
    well as the best tenth of the sources: against such a reference ECE (10 bins) <= .07
    (4 seeds: .024-.052; against the truth itself, which no source reads so well, .084-.106,
    never surer than right: mean p .87-.88)."""
    facts, truth, reference = _graded(seed)
    scored = {}
    for cats in (None, {"rating": GRADES}):
        with Memory(tmp_path / f"{cats is None}.db", categories=cats) as mem:
            mem.add_many(facts)
            mem.learn_from_agreement()
            scored[cats is None] = [mem.decide(f"f{i}", "rating", utility=ANSWER)
                                    for i in range(len(truth))]
    accuracy = {k: float(np.mean([d.value == t for d, t in zip(v, truth, strict=True)]))
                for k, v in scored.items()}
    ok = [d.value == t for d, t in zip(scored[False], reference, strict=True)]
    assert accuracy[False] >= 0.95 and accuracy[False] >= accuracy[True] + 0.05
    assert ece([d.p for d in scored[False]], ok) <= 0.07
    assert np.mean([d.p for d in scored[False]]) <= accuracy[False]
    # the confusion is journalled: a reopen with the same categories answers the same
    with Memory(tmp_path / "False.db", categories={"rating": GRADES}) as again:
        d = again.decide("f0", "rating", utility=ANSWER)
        assert (d.value, d.p) == (scored[False][0].value, scored[False][0].p)


def _few_claims(seed: int, n_items: int = 600, n_sources: int = 120,
                per_item: int = 3) -> tuple[list[dict], list[str], list[str]]:
    """Four categories, sources right with probability .4-.9 (else one of the other three
    at random), three claims a slot: about 15 claims a source. Returns the facts, the
    truth and a reference reading of each slot by a reader as good as the best tenth of
    the sources (right with .875, the mean of the top tenth of .4-.9)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_items)
    acc = rng.uniform(0.4, 0.9, n_sources)

    def read(t: int, a: float, rng: np.random.Generator) -> int:
        return t if rng.random() < a else int(rng.choice([c for c in range(4) if c != t]))

    facts = []
    for i in range(n_items):
        for w in rng.choice(n_sources, per_item, replace=False):
            facts.append({"subject": f"f{i}", "attribute": "rating",
                          "value": GRADES[read(int(truth[i]), acc[w], rng)],
                          "source": f"w{w}", "valid_from": "2026-01-01"})
    reader = np.random.default_rng(seed + 1000)
    reference = [GRADES[read(int(t), 0.875, reader)] for t in truth]
    return facts, [GRADES[t] for t in truth], reference


@pytest.mark.parametrize("seed", [0, 1])
def test_sources_of_few_claims_each_are_read_as_that_uncertain(seed: int) -> None:
    """Sources of about 15 claims each: a confusion row learned from so few is far less
    certain than mean field's rows say. A decision reads the claims through each bootstrap
    fit's rows in turn, its answer still from the full fit's rows. Scored against a
    reference read as well as the best tenth of the sources (what p is the probability
    of). Tolerance: ECE (10 bins) <= .07 (4 seeds: .024-.051); the full fit's rows alone
    > .15 (.177-.193)."""
    from dataclasses import replace

    facts, truth, reference = _few_claims(seed)
    with Memory(categories={"rating": GRADES}) as mem:
        mem.add_many(facts)
        mem.learn_from_agreement()
        decided = [mem.decide(f"f{i}", "rating", utility=ANSWER) for i in range(len(truth))]
        book = mem._p.rel.book
        book.confusion["rating"] = replace(book.confusion["rating"], bagged={})
        unbagged = [mem.decide(f"f{i}", "rating", utility=ANSWER) for i in range(len(truth))]
    assert np.mean([d.value == t for d, t in zip(decided, truth, strict=True)]) >= 0.7
    ok = [d.value == t for d, t in zip(decided, reference, strict=True)]
    assert ece([d.p for d in decided], ok) <= 0.07
    # the answers are the full fit's; only its own rows are far surer than they are right
    assert [d.value for d in unbagged] == [d.value for d in decided]
    assert ece([d.p for d in unbagged], ok) > 0.15


def test_one_claim_of_a_source_learned_always_right_is_read_as_sure() -> None:
    """A slot one source claimed, a source right on all 30 films (two lenient sources say
    G for every film; with the film they outvote, the fit reads the claims about a film
    as correlated, rho .2): the probability comes
    through the bootstrap fits' rows, which all read it as right, so p stays high
    (measured .96: a confirmer is read as well as the best sources, careful-a and b, and
    no better). Resampling the slot's own claims as well (BayesBag for the item) drops
    that one claim in a third of the draws: p .78."""
    with Memory(categories={"rating": GRADES}) as mem:
        for i in range(30):
            truth = "PG" if i % 3 == 0 else "G"
            for src in ("lenient-a", "lenient-b", "careful-a", "careful-b"):
                said = "G" if src.startswith("lenient") else truth
                mem.add(f"f{i}", "rating", said, source=src, valid_from="2026-01-01")
        for src, said in (("lenient-a", "G"), ("lenient-b", "G"), ("careful-a", "PG")):
            mem.add("new", "rating", said, source=src, valid_from="2026-01-01")
        mem.learn_from_agreement()
        mem.add("solo", "rating", "PG", source="careful-a", valid_from="2026-01-01")
        d = mem.decide("solo", "rating", utility=ANSWER)
    assert d.value == "PG" and d.p >= 0.95


def test_a_lenient_majority_is_outvoted() -> None:
    """Hand-worked: a fifth of the films are PG. Two sources say G for every PG film; two
    are always right and one says PG for one G film in ten. On a film only the two lenient
    sources and that one rated, its PG against their two G is read as PG once the confusion
    is learned (the lenient sources' G says nothing: they say it for either grade); the
    one-coin model, for which the lenient sources are 80% right, says G."""
    facts = []
    for i in range(50):
        truth = "PG" if i % 5 == 1 else "G"
        for src in ("lenient1", "lenient2", "careful1", "careful2", "careful3"):
            said = "G" if src.startswith("lenient") else truth
            if src == "careful1" and i % 10 == 2:
                said = "PG"
            facts.append({"subject": f"f{i}", "attribute": "rating", "value": said,
                          "source": src, "valid_from": "2026-01-01"})
    facts += [{"subject": "t", "attribute": "rating", "value": v, "source": s,
               "valid_from": "2026-01-01"}
              for s, v in (("lenient1", "G"), ("lenient2", "G"), ("careful1", "PG"))]
    p_pg = {}
    for cats in (None, {"rating": GRADES}):
        with Memory(categories=cats) as mem:
            mem.add_many(facts)
            mem.learn_from_agreement()
            d = mem.decide("t", "rating", utility=ANSWER)
            p_pg[cats is None] = next(a.p for a in d.alternatives if a.value == "PG")
            if cats:
                assert (d.value, mem.decide("f0", "rating", utility=ANSWER).value) == ("PG", "G")
    assert p_pg[True] < 0.45 < 0.5 < p_pg[False]


def test_before_learning_a_wrong_answer_is_one_of_the_other_categories() -> None:
    """Without a learned confusion a source's row is one-coin over the K categories: two
    equal sources that disagree leave mass on the two categories nobody claimed, where the
    open-values model (two values claimed) splits everything between them."""
    def probs(cats: dict | None) -> list[float]:
        with Memory(categories=cats) as mem:
            for src, v in (("a", "G"), ("b", "PG")):
                mem.add("f", "rating", v, source=src, valid_from="2026-01-01")
            return [c.p for c in mem.current("f", "rating").candidates]

    open_p, cat_p = probs(None), probs({"rating": GRADES})
    assert sum(open_p) == pytest.approx(1.0)
    assert abs(cat_p[0] - cat_p[1]) < 0.05 and 0.3 < cat_p[0] < 0.5 and sum(cat_p) < 0.95


def test_a_value_outside_the_categories_is_refused(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", categories={"Rating": GRADES}) as mem:
        with pytest.raises(InvalidFact, match="not one of the categories of 'rating'"):
            mem.add_many([{"subject": "f", "attribute": "rating", "value": "PG",
                           "source": "a"},
                          {"subject": "g", "attribute": "rating", "value": "PG-13",
                           "source": "a"}])
        assert len(mem) == 0 and mem.audit()[-1].kind == "rejected_write"
        with pytest.raises(InvalidFact, match="not one of the categories"):
            mem.what_if(add=[{"subject": "f", "attribute": "rating", "value": "PG-13",
                              "source": "a"}])
        mem.add("f", "rating", " pg ", source="a")  # the same value as "PG"
        mem.add("f", "year", 1999, source="a")  # other attributes are open
        assert len(mem) == 2


def test_a_journal_written_before_the_categories_still_opens(tmp_path: Path) -> None:
    """Facts written before the categories were declared are kept; a slot holding a value
    outside them is decided by the open-values model and left out of the confusion fit."""
    with Memory(tmp_path / "m.db") as mem:
        for src, v in (("a", "PG-13"), ("b", "PG")):
            mem.add("f", "rating", v, source=src, valid_from="2026-01-01")
        for i in range(10):
            for src in ("a", "b"):
                mem.add(f"g{i}", "rating", "R", source=src, valid_from="2026-01-01")
    with Memory(tmp_path / "m.db", categories={"rating": GRADES}) as mem:
        assert len(mem) == 22
        assert sorted(c.value for c in mem.current("f", "rating").candidates) == ["PG",
                                                                                   "PG-13"]
        mem.learn_from_agreement()
        assert sum(c.p for c in mem.current("f", "rating").candidates) == pytest.approx(1.0)
        assert mem.decide("g0", "rating", utility=ANSWER).value == "R"


@pytest.mark.parametrize("categories", [
    ["G", "PG"], {"rating": "GPR"}, {"rating": ["G"]}, {"rating": ["G", "g"]},
    {"rating": ["G", 1.5]}, {"rating": ["G", True]}, {"rating": ["G", ""]},
    {"": ["G", "PG"]}, {"rating": [str(i) for i in range(65)]},
])
def test_bad_categories_are_refused(categories: object) -> None:
    with pytest.raises(PolicyError, match="categor|attribute"):
        Memory(categories=categories)  # type: ignore[arg-type]


@pytest.mark.parametrize("confusion", [
    [],
    {"rating": {"categories": ["G"], "class_prior": [1], "correlation": 0, "sources": {}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 2,
                "sources": {}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, -1], "correlation": 0,
                "sources": {}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 0,
                "sources": {"a": [[1, 1]]}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 0,
                "perception": [[1, 0.1], [0.1, 1]], "sources": {"a": [[1, 1], [1, -2]]}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 0,
                "perception": [[1, 0.1]], "sources": {}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 0,
                "perception": [[1, 0.1], [0.1, 1]], "sources": {"a": [[1, 1], [1, 1]]},
                "bagged": {"a": [[[1, 1], [1, -2]]]}}},
    {"rating": {"categories": ["G", "PG"], "class_prior": [1, 1], "correlation": 0,
                "perception": [[1, 0.1], [0.1, 1]], "sources": {"a": [[1, 1], [1, 1]]},
                "bagged": {"a": [[1, 1], [1, 1]]}}},  # one fit's rows, not a list of fits
])
def test_a_bad_confusion_prior_is_refused_on_import(confusion: object, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1,
                               "body": {"source_prior": {}, "confusion": confusion}}) + "\n")
    with Memory(categories={"rating": ["G", "PG"]}) as mem:
        with pytest.raises(InvalidFact, match="confusion"):
            mem.import_jsonl(bad)
        assert mem.reliability() == []


def test_confirmed_slots_teach_what_the_confirmer_means(tmp_path: Path) -> None:
    """The reference a user confirms against may differ from what the sources perceive:
    here the confirmer calls R what every source rates X. Confirming a third of the films
    and learning again, the perception matrix learns it, and the other films' X is read as
    the R that would be confirmed. The learned state survives a full and a lazy reopen, and
    an export imported into a new memory answers the same."""
    facts, truth, _ = _graded(2)
    truth = ["R" if t == "X" else t for t in truth]
    path, cats = tmp_path / "m.db", {"rating": GRADES}
    with Memory(path, categories=cats) as mem:
        mem.add_many(facts)
        mem.learn_from_agreement()
        before = [mem.decide(f"f{i}", "rating", utility=ANSWER) for i in range(100, 300)]
        for i in range(100):
            mem.confirm(f"f{i}", "rating", truth[i])
        mem.learn_from_agreement()
        after = [mem.decide(f"f{i}", "rating", utility=ANSWER) for i in range(100, 300)]
        mem.export_jsonl(tmp_path / "m.jsonl")
    right = [[d.value == t for d, t in zip(ds, truth[100:], strict=True)]
             for ds in (before, after)]
    assert sum(right[1]) >= sum(right[0]) + 10 and np.mean(right[1]) >= 0.93  # 169 -> 189
    assert not [d for d in after if d.value == "X"]  # none claimed R: it is answered anyway
    for lazy in (False, True):
        with Memory(path, categories=cats, lazy=lazy) as again:
            assert [again.decide(f"f{i}", "rating", utility=ANSWER).p
                    for i in range(100, 300)] == [d.p for d in after]
    with Memory(categories=cats) as other:
        other.import_jsonl(tmp_path / "m.jsonl")
        assert other.decide("f100", "rating", utility=ANSWER).p == after[0].p


def test_the_journal_keeps_the_categories(tmp_path: Path) -> None:
    """Declared once, the categories are journalled: a reopen without them (lazy or full,
    read-only too) still refuses other values and decides with the categories; the same
    declaration again writes nothing; a new one replaces the attribute's."""
    path = tmp_path / "m.db"
    with Memory(path, categories={"rating": ["G", "PG"]}) as mem:
        for src, v in (("a", "G"), ("b", "PG")):
            mem.add("f", "rating", v, source=src, valid_from="2026-01-01")
        events = mem.export_jsonl(tmp_path / "one.jsonl")
    with Memory(path, categories={"rating": ["G", "PG"]}) as mem:
        assert mem.export_jsonl(tmp_path / "two.jsonl") == events  # nothing new
    with Memory(path, readonly=True, categories={"rating": GRADES}) as mem:
        assert sum(c.p for c in mem.current("f", "rating").candidates) < 0.95  # R, X too
    with Memory(path) as mem:  # the read-only open wrote nothing
        assert mem.export_jsonl(tmp_path / "three.jsonl") == events
    for lazy in (False, True):
        with Memory(path, lazy=lazy) as mem:
            with pytest.raises(InvalidFact, match="categories of 'rating'"):
                mem.add("f", "rating", "R", source="c")
            # two categories: the two equal sources share everything between them
            assert sum(c.p for c in mem.current("f", "rating").candidates) == \
                pytest.approx(1.0)
    with Memory(path, categories={"rating": GRADES}) as mem:
        mem.add("g", "rating", "R", source="c")
    with Memory(path) as mem:
        mem.add("h", "rating", "X", source="c")
        with Memory() as other:  # an export carries the declaration
            mem.export_jsonl(tmp_path / "all.jsonl")
            other.import_jsonl(tmp_path / "all.jsonl")
            with pytest.raises(InvalidFact, match="categories"):
                other.add("f", "rating", "PG-13", source="c")


def test_a_declaration_can_be_removed(tmp_path: Path) -> None:
    """``categories={attribute: None}`` turns the attribute back into an open one: other
    values are taken again and conflicts are decided by the open-values model; the removal
    is journalled (a reopen, a read-only one and an export keep it), and removing what is
    not declared writes nothing."""
    path = tmp_path / "m.db"
    facts, _, _ = _graded(0, n_items=60)
    with Memory(path, categories={"rating": GRADES}) as mem:
        mem.add_many(facts)
        mem.learn_from_agreement()
        declared = mem.decide("f0", "rating", utility=ANSWER)
    with Memory(path, categories={"rating": None}) as mem:
        mem.add("f0", "rating", "PG-13", source="late", valid_from="2026-01-01")
        open_values = mem.current("f0", "rating")
        assert "PG-13" in {c.value for c in open_values.candidates}
        assert sum(c.p for c in open_values.candidates) == pytest.approx(1.0)  # no R, X
        events = mem.export_jsonl(tmp_path / "one.jsonl")
    for kwargs in ({}, {"readonly": True}, {"lazy": True}, {"categories": {"rating": None}}):
        with Memory(path, **kwargs) as mem:  # type: ignore[arg-type]
            mem.add("g", "rating", "NC-17", source="a") if not kwargs.get("readonly") else None
            assert mem.current("f0", "rating").candidates == open_values.candidates
    with Memory(path, categories={"rating": None}) as mem:
        assert mem.export_jsonl(tmp_path / "two.jsonl") == events + 3  # three adds, no prior
    with Memory() as other:
        other.import_jsonl(tmp_path / "two.jsonl")
        other.add("h", "rating", "PG-13", source="b")
    with Memory(path, categories={"rating": GRADES}) as mem:  # declared again
        with pytest.raises(InvalidFact, match="categories of 'rating'"):
            mem.add("h", "rating", "PG-13", source="b")
        mem.learn_from_agreement()
        assert mem.decide("f1", "rating", utility=ANSWER).value in GRADES
    assert declared.value in GRADES
    with Memory(categories={"genre": None}) as mem:  # never declared: nothing to remove
        assert mem.export_jsonl(tmp_path / "three.jsonl") == 0


def test_bad_imported_categories_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    for cats in ({"rating": ["G"]}, {"rating": "GPR"}, ["G", "PG"], {"rating": ["G", 1.5]}):
        bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1,
                                   "body": {"categories": cats}}) + "\n")
        with Memory() as mem:
            with pytest.raises(InvalidFact):
                mem.import_jsonl(bad)
            mem.add("f", "rating", "anything", source="a")  # still an open attribute


def test_a_categorical_decision_computes_its_posterior_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """decide() scores the slot's candidates and then every category from the same draws:
    one posterior, not two. A new outcome or a new confusion is a new posterior."""
    from truthkeeper.reliability import conflict

    calls = []
    real = conflict._category_posterior

    def counted(*args: object) -> object:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(conflict, "_category_posterior", counted)
    facts, _, _ = _graded(0, n_items=60)
    said: dict[str, set[str]] = {}
    for f in facts:
        said.setdefault(f["subject"], set()).add(f["value"])
    subject = next(s for s, values in said.items() if len(values) > 1)  # a conflict
    with Memory(categories={"rating": GRADES}) as mem:
        mem.add_many(facts)
        before = mem.decide(subject, "rating", utility=ANSWER)
        assert len(calls) == 1
        assert mem.decide(subject, "rating", utility=ANSWER) == before and len(calls) == 1
        source = mem.history(subject, "rating")[0].source
        mem.record_source_outcome(source, correct=False, tier="agent")
        after = mem.decide(subject, "rating", utility=ANSWER)
        assert len(calls) == 2 and after.alternatives != before.alternatives
        mem.learn_from_agreement()  # a new confusion
        learned = mem.decide(subject, "rating", utility=ANSWER)
        assert len(calls) == 3 and learned.alternatives != after.alternatives


def test_declaring_categories_keeps_the_type_and_the_cardinality(tmp_path: Path) -> None:
    """``declare(attribute, categories=...)`` changes the categories only: a value type
    and a set's cardinality declared before stay (they were reset to none and one: the
    type was dropped, and a set that held facts could not be given categories). An
    explicit ``value_type=None`` still removes the type; a declaration the attribute
    already has journals nothing."""
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.declare("price", value_type="number")
        mem.declare("price", categories=[1, 2, 3])
        assert mem.add("acme", "price", "2", source="a").value == 2
        mem.declare("pet", cardinality="many")
        mem.add("ana", "pet", "cat", source="a")
        mem.declare("pet", categories=["cat", "dog"])
        mem.add("ana", "pet", "dog", source="a")
        assert mem.current("ana", "pet").value == ("cat", "dog")
        length = mem.export_jsonl(tmp_path / "a.jsonl")
        mem.declare("pet", cardinality="many")  # what it has: nothing is written
        mem.declare("price")
        assert mem.export_jsonl(tmp_path / "b.jsonl") == length
        with pytest.raises(InvalidFact, match="categories of 'pet'"):
            mem.add("ana", "pet", "bird", source="a")
    with Memory(path) as mem:
        assert {a: (d.cardinality, d.value_type) for a, d in mem.declarations().items()} == {
            "price": ("one", "number"), "pet": ("many", None)}
        mem.declare("price", value_type=None)  # removed: "2" is a string, not a category
        with pytest.raises(InvalidFact, match="categories of 'price'"):
            mem.add("acme", "price", "2", source="a")
        assert mem.add("acme", "price", 3, source="a").value == 3
