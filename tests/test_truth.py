"""Truth discovery over open values: the baselines against hand-worked numbers, the matching
rules, and truthkeeper beating majority vote where sources differ in reliability."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthkeeper.bench.truth import (
    accu,
    jaccard,
    majority_vote,
    normalise_authors,
    normalise_time,
    truthfinder,
    truthkeeper_answers,
)
from truthkeeper.cli import main

SMALL = {"i1": [("a", "x"), ("b", "x"), ("c", "y")]}


def test_one_iteration_by_hand() -> None:
    # ACCU, A = 0.8, n = 100: C(x) = 2 ln(400), C(y) = ln(400); P(x) = 400 / 401
    assert accu(SMALL, iterations=1)["i1"] == ("x", pytest.approx(400 / 401))
    # TruthFinder, t = 0.9: tau = -ln(0.1) per source; sigma(x) = 2 tau;
    # s(x) = 1 / (1 + exp(-0.3 * 2 tau)) = 0.79924
    assert truthfinder(SMALL, iterations=1)["i1"] == ("x", pytest.approx(0.7992399910868982))
    # implication: "ab cd ef" gains 0.5 * tau("ab cd") * (jaccard 2/3 - 0.5)
    sim = {"i": [("a", "ab cd ef"), ("b", "ab cd")]}
    conf = truthfinder(sim, similarity=jaccard, iterations=1)
    tau = -math.log(0.1)
    assert conf["i"][1] == pytest.approx(1 / (1 + math.exp(-0.3 * (tau + 0.5 * tau / 6))))
    assert majority_vote(SMALL)["i1"] == ("x", pytest.approx(2 / 3))


def _reliability_matters() -> dict[str, list[tuple[str, str]]]:
    """a and b are right everywhere; c, d, e scatter their errors on k1..k6 but agree on a
    wrong value on z, where they outvote a and b."""
    claims = {f"k{i}": [("a", "t"), ("b", "t"), ("c", f"c{i}"), ("d", f"d{i}"),
                        ("e", f"e{i}")] for i in range(6)}
    claims["z"] = [("a", "t"), ("b", "t"), ("c", "w"), ("d", "w"), ("e", "w")]
    return claims


def test_learning_source_reliability_beats_the_majority() -> None:
    claims = _reliability_matters()
    assert majority_vote(claims)["z"][0] == "w"
    assert accu(claims)["z"][0] == "t"
    # TruthFinder's trusts stay compressed (0.8 against 0.67 here): the three still win
    assert truthfinder(claims)["z"][0] == "w"
    assert truthkeeper_answers(claims, "value", ["z"])["z"][0] == "t"


def test_matching_rules() -> None:
    assert normalise_authors("Knuth, Donald E.") == "donald knuth"
    assert normalise_authors("donald knuth") == normalise_authors("KNUTH, DONALD")
    assert normalise_authors("Not Available") is None and normalise_authors("") is None
    assert normalise_time("4:55 p.m.") == "16:55" == normalise_time("4:55pDec 2")
    assert normalise_time("12:05 a.m.") == "00:05" and normalise_time("16:55") == "16:55"
    assert normalise_time("Contact Airline") is None


def test_eval_truth_cli_on_a_small_folder(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "flights_raha"
    d.mkdir()
    head = "src,flight,scheduled_dept,actual_dept,scheduled_arrival,actual_arrival\n"
    rows = [f"s{j},F{i},{'4:55 p.m.' if j < 3 or i == 0 else '5:10 p.m.'},,,\n"
            for i in range(4) for j in range(5)]
    (d / "dirty.csv").write_text(head + "".join(rows))
    (d / "clean.csv").write_text(head + "".join(f"s{j},F{i},4:55 p.m.,,,\n"
                                               for i in range(4) for j in range(5)))
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["sets"]["flights_raha"]
    assert out["items"] == 4 and out["majority_vote"]["accuracy"] == 1.0
    assert set(out) >= {"truthfinder", "accu", "truthkeeper"}
    assert out["gold_not_claimed"] == 0
    methods = ("majority_vote", "truthfinder", "accu", "truthkeeper")
    assert all({"brier", "log_loss", "ece_if_calibrated"} <= set(out[m]) for m in methods)
    right = out["truthkeeper"]["log_loss"]
    # a gold value that no source claims is counted, and no method can get it right
    (d / "clean.csv").write_text(head + "".join(
        f"s{j},F{i},{'6:00 p.m.' if i == 3 else '4:55 p.m.'},,,\n"
        for i in range(4) for j in range(5)))
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["sets"]["flights_raha"]
    assert out["gold_not_claimed"] == 1 and out["truthkeeper"]["accuracy"] == 0.75
    assert out["truthkeeper"]["log_loss"] > right  # a confident wrong answer costs


TRUTH_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "truth_discovery"


def test_matching_rules_for_numbers_and_text() -> None:
    from truthkeeper.bench.truth_data import choose_rule, normalise_number, normalise_text

    assert normalise_number("$1,234.50") == "1234.5" == normalise_number("1234.500")
    assert normalise_number("12%") == "12" and normalise_number("-0.25") == "-0.25"
    assert normalise_number("12 a.m.") is None and normalise_number("n/a") is None
    assert normalise_number("1e400") is None and normalise_number("-0") == "0"
    assert normalise_text("  The  Hobbit. ") == "the hobbit" and normalise_text("N/A") is None
    assert choose_rule(["4:55 p.m.", "", "16:10"], names=False) == "time"
    assert choose_rule(["$3.50", "3.5", "n/a"], names=False) == "number"
    assert choose_rule(["Knuth, Donald", "Aho; Ullman"], names=True) == "authors"
    assert choose_rule(["Knuth, Donald", "Aho; Ullman"], names=False) == "text"
    from truthkeeper.bench.truth import near_numbers

    assert near_numbers("292648", "292650") == 1.0 and near_numbers("100", "101") == 0.0


def test_a_truth_set_is_found_by_its_layout_not_its_name(tmp_path: Path) -> None:
    """A table whose first column is a row id, with a price, a time and a text column, in
    a folder named nothing like the shared sets: each column is read under its own rule,
    and a price stated as "$1,200.00" by one site and "1200" by another is one value."""
    from truthkeeper.bench.truth_data import find_truth_sets, load_truth_set

    d = tmp_path / "shop_prices"
    d.mkdir()
    (tmp_path / "notes").mkdir()  # a folder in neither layout is passed over
    head = "tuple_id,site,product,price,opens,colour\n"
    dirty, clean = [], []
    for i in range(6):
        for j in range(5):
            wrong = j == 4 and i % 2 == 0  # one site errs on half the products
            price = f'"${1000 + i * 100:,}.00"' if j % 2 else str(1000 + i * 100)
            dirty.append(f"{i * 5 + j},site{j},P{i},{'999' if wrong else price},"
                         f"{'9:15 a.m.' if wrong else '9:00 a.m.'},{' Red ' if j else 'red'}\n")
            clean.append(f"{i * 5 + j},site{j},P{i},{1000 + i * 100},9:00 a.m.,red\n")
    (d / "dirty.csv").write_text(head + "".join(dirty))
    (d / "clean.csv").write_text(head + "".join(clean))
    assert find_truth_sets(tmp_path) == [d]
    assert find_truth_sets(d) == [d]  # the set's own folder, given directly
    claims, gold, rule_of = load_truth_set(d)
    assert rule_of["P0|price"] == "number" and rule_of["P0|opens"] == "time"
    assert rule_of["P0|colour"] == "text"
    assert claims["P1|price"] == [(f"site{j}", "1100") for j in range(5)]
    assert claims["P0|opens"][4] == ("site4", "09:15") and gold["P0|opens"] == "09:00"
    assert {v for _, v in claims["P3|colour"]} == {"red"} and gold["P5|price"] == "1500"
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    # comma-separated claims with a header row, and a gold file named "truth"
    b = tmp_path / "books_csv"
    b.mkdir()
    (b / "claims.csv").write_text('source,isbn,title,authors\nshopA,111,"A, B","Knuth, '
                                  'Donald E."\nshopB,111,A,donald knuth\n')
    (b / "truth.csv").write_text("isbn,authors\n111,\"KNUTH, DONALD\"\n")
    assert find_truth_sets(tmp_path) == [b, d]
    claims, gold, rule_of = load_truth_set(b)
    assert claims == {"111": [("shopA", "donald knuth"), ("shopB", "donald knuth")]}
    assert gold["111"] == "donald knuth" and rule_of == {"111": "authors"}


def test_eval_truth_reads_numbers_as_numbers(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A claims file and a gold file, with values that are numbers: decide()'s answers come
    back in the gold's form, and near-equal numbers support each other."""
    d = tmp_path / "populations"
    d.mkdir()
    rows, gold = [], []
    for i in range(30):
        true = 10_000 + 37 * i
        for j in range(5):
            # sites 0 and 1 are wrong together on two cities in three; site 2 is near
            v = (7_000 + i if i % 3 else true) if j < 2 else true + 2 if j == 2 else true
            rows.append(f"site{j}\tcity{i}\tsome title\t{v:,}\n")
        gold.append(f"city{i}\t{true}\n")
    (d / "claims.tsv").write_text("".join(rows))
    (d / "gold.tsv").write_text("".join(gold))
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["sets"]["populations"]
    assert out["rules"] == ["number"] and out["items"] == 30
    assert out["truthkeeper"]["gold_items"] == 30
    # majority ties 2 against 2 on two cities in three (site 2 is near, not equal), and
    # takes the value claimed first
    assert out["majority_vote"]["accuracy"] < 1.0
    assert out["truthkeeper_similarity"]["accuracy"] == 1.0
    assert out["truthkeeper_similarity"]["accuracy"] >= out["truthkeeper"]["accuracy"]


@pytest.mark.skipif(not TRUTH_DATA.is_dir(), reason="../shared/data/truth_discovery absent")
def test_the_shared_sets_read_the_same_under_other_names(tmp_path: Path) -> None:
    from truthkeeper.bench.truth import load_books, load_flights
    from truthkeeper.bench.truth_data import find_truth_sets, load_truth_set

    books, flights = tmp_path / "library", tmp_path / "timetable"
    books.mkdir()
    flights.mkdir()
    (books / "claims.tsv").symlink_to(TRUTH_DATA / "book_yin2008" / "book.txt")
    (books / "truth.tsv").symlink_to(TRUTH_DATA / "book_yin2008" / "book_golden.txt")
    (books / "silver.txt").symlink_to(TRUTH_DATA / "book_yin2008" / "book_silver.txt")
    for name in ("dirty.csv", "clean.csv"):
        (flights / name).symlink_to(TRUTH_DATA / "flights_raha" / name)
    assert find_truth_sets(tmp_path) == [books, flights]
    claims, gold, rule_of = load_truth_set(books)
    assert (claims, gold) == load_books(TRUTH_DATA / "book_yin2008")
    assert set(rule_of.values()) == {"authors"} and len(gold) == 100
    claims, gold, rule_of = load_truth_set(flights)
    assert (claims, gold) == load_flights(TRUTH_DATA / "flights_raha")
    assert set(rule_of.values()) == {"time"} and len(gold) >= 400


def test_similarity_lets_near_equal_values_support_each_other() -> None:
    from truthkeeper import InvalidFact, Memory, Similarity

    def probs(sim: object) -> dict[object, float]:
        with Memory(similarity=sim) as mem:
            for src, v in [("a", 100), ("b", 101), ("c", 200)]:
                mem.add("x", "n", v, source=src, valid_from="2026-01-01")
            return {c.value: c.p for c in mem.current("x", "n").candidates}

    plain = probs(None)
    assert max(plain.values()) - min(plain.values()) < 0.02  # three single votes: a tie
    near = probs(Similarity.numbers(rel_tol=0.05))
    # by hand: under truth 100, b's 101 counts as a right vote (k = 1): theta^2 (1-theta)/2
    # against theta ((1-theta)/2)^2 for 200; with theta ~ 0.65 that is 0.42 / 0.42 / 0.16
    assert near[100] == pytest.approx(near[101], abs=0.02) and near[200] < near[100] / 2
    assert probs(lambda a, b: 1.0 if abs(a - b) < 5 else 0.0)[200] < near[100] / 2
    with Memory(similarity=Similarity.tokens()) as mem:  # learning from agreement, too
        for i in range(5):
            mem.add(f"b{i}", "authors", "donald knuth", source="a", valid_from="2026-01-01")
            mem.add(f"b{i}", "authors", "donald e knuth", source="b", valid_from="2026-01-01")
            mem.add(f"b{i}", "authors", f"someone {i}", source="c", valid_from="2026-01-01")
        est = mem.learn_from_agreement()
    assert est["a"] > est["c"] and est["b"] > est["c"]
    bad = Memory(similarity=lambda a, b: 2.0)
    bad.add("x", "n", 1, source="a", valid_from="2026-01-01")
    bad.add("x", "n", 2, source="b", valid_from="2026-01-01")
    with pytest.raises(InvalidFact, match="must be in"):
        bad.current("x", "n")
    assert len(bad) == 2
    with pytest.raises(InvalidFact):
        Similarity.numbers(rel_tol=-1)
    with pytest.raises(InvalidFact):
        Memory(similarity=42)


def _chorus(seed: int, n: int = 60) -> list[dict]:
    """Four independent sources right 75% of the time (scattered errors) and a chorus of
    three that copy one another (right 40% of the time, all with the same wrong value)."""
    import random

    rng = random.Random(seed)
    facts = []
    for i in range(n):
        for s in "abde":
            v = "t" if rng.random() < 0.75 else f"w{s}{rng.randrange(3)}"
            facts.append({"subject": f"q{i}", "attribute": "v", "value": v, "source": s,
                          "valid_from": "2026-01-01"})
        v = "t" if rng.random() < 0.4 else "wc"
        facts += [{"subject": f"q{i}", "attribute": "v", "value": v, "source": s,
                   "valid_from": "2026-01-01"} for s in ("c1", "c2", "c3")]
    return facts


@pytest.mark.parametrize("seed", [0, 1])
def test_dependence_keeps_a_chorus_of_copies_from_outvoting(seed: int, tmp_path: Path) -> None:
    from truthkeeper import Memory

    def accuracy(mem: Memory) -> float:
        return sum(mem.decide(f"q{i}", "v").value == "t" for i in range(60)) / 60

    with Memory(tmp_path / "m.db") as mem:
        mem.add_many(_chorus(seed))
        plain = mem.learn_from_agreement()
        before = accuracy(mem)
        est = mem.learn_from_agreement(dependence=True)
        after = accuracy(mem)
    assert plain["c1"] > plain["a"]  # without it, the chorus looks like the reliable one
    assert est["a"] > est["c1"] and after > before + 0.3
    with Memory(tmp_path / "m.db") as again:  # the dependence is journalled
        assert accuracy(again) == after


@pytest.mark.parametrize("seed", [0, 1])
def test_dependence_calibration_with_copying_sources(seed: int) -> None:
    """Calibration of decide()'s probability on data with copying sources, 200 items.
    Tolerance: ECE (10 equal-width bins) <= .12 with dependence (4 seeds: .058-.086, mean p
    .90-.93 at accuracy .97-.98), against >= .5 without (the chorus makes the memory
    confidently wrong). The domain of false values is chosen again once the copies are
    found (N = 4); chosen before, the chorus's wrong claims, which all coincide, made it the
    claimed values (N = 1), so the chorus agreeing with the truth counted as weak evidence
    against it: ECE .15-.21, mean p .76-.84."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    result = {}
    for dependence in (False, True):
        with Memory() as mem:
            mem.add_many(_chorus(seed, 200))
            mem.learn_from_agreement(dependence=dependence)
            ds = [mem.decide(f"q{i}", "v", utility=answer) for i in range(200)]
        ok = [d.value == "t" for d in ds]
        result[dependence] = (sum(ok) / 200, ece([d.p for d in ds], ok))
    assert result[False][1] >= 0.5 and result[True][1] <= 0.12
    assert result[True][0] >= 0.95


def _accuracy_by_dependence(facts: list[dict], n: int) -> dict[bool, tuple[float, float]]:
    """The share of questions q0..q{n-1} whose decided value is "t", and the ECE (10
    equal-width bins) of decide()'s probabilities, learned without and with dependence."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    out = {}
    for dependence in (False, True):
        with Memory() as mem:
            mem.add_many(facts)
            mem.learn_from_agreement(dependence=dependence)
            ds = [mem.decide(f"q{i}", "v", utility=answer) for i in range(n)]
        ok = [d.value == "t" for d in ds]
        out[dependence] = (sum(ok) / n, ece([d.p for d in ds], ok))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_two_choruses_do_not_make_accurate_sources_look_like_copies(seed: int) -> None:
    """Five independent sources right 85% of the time (scattered errors) and two choruses of
    four copiers each, right half of the time. When both choruses are wrong, the accurate
    sources' shared true value has a minority of the *votes* of the other sources; judged by
    the vote share it read as a shared error, the accurate sources as copies of one another,
    and dependence cost .3 accuracy (.55 against .84). Scored as a mixture over the value
    being true or false, and judged again with the accuracies of the fit that discounts the
    copies (ACCU's iteration), it costs nothing."""
    import random


    rng = random.Random(seed)
    facts = []
    for i in range(150):
        for s in range(5):
            v = "t" if rng.random() < 0.85 else f"w{s}{rng.randrange(5)}"
            facts.append({"subject": f"q{i}", "attribute": "v", "value": v,
                          "source": f"i{s}", "valid_from": "2026-01-01"})
        for c in range(2):
            v = "t" if rng.random() < 0.5 else f"wc{c}"
            facts += [{"subject": f"q{i}", "attribute": "v", "value": v,
                       "source": f"c{c}{s}", "valid_from": "2026-01-01"} for s in range(4)]
    accuracy = _accuracy_by_dependence(facts, 150)
    assert accuracy[True][0] >= accuracy[False][0] - 0.02


@pytest.mark.parametrize("seed", [0, 3])
def test_copies_of_a_source_with_scattered_errors_are_found(seed: int) -> None:
    """Three independent sources (right .8, .75, .7) and a poor one (.4) copied by two others
    90% of the time; every error is a value of its own. The chorus takes the plain fit
    (accuracy .37-.42); with dependence it must not, and decide() must be calibrated.
    Tolerance: accuracy >= .85 and ECE (10 equal-width bins) <= .12 (6 seeds: .90-.95, ECE
    .077-.095). The copies are found when the first round judges with equal accuracies, as
    ACCU starts (judged with the accuracies of a fit the chorus has taken, it found
    nothing); when the domain of false values was chosen before the copies were found, the
    chorus's shared errors read as common ones (N = 1 or 2): accuracy .72-.91, ECE
    .12-.22."""
    import random


    rng = random.Random(seed)
    facts = []
    for i in range(300):
        said = {s: "t" if rng.random() < r else f"w{rng.randrange(10**6)}"
                for s, r in enumerate((0.8, 0.75, 0.7, 0.4, 0.4, 0.4))}
        for copier in (4, 5):
            if rng.random() < 0.9:
                said[copier] = said[3]
        facts += [{"subject": f"q{i}", "attribute": "v", "value": v, "source": f"s{s}",
                   "valid_from": "2026-01-01"} for s, v in said.items()]
    (plain, _), (accuracy, error) = (_accuracy_by_dependence(facts, 300)[d] for d in (False, True))
    assert plain < 0.5 and accuracy >= 0.85 and error <= 0.12


def test_no_dependence_among_independent_sources() -> None:
    import random

    from truthkeeper import Memory

    rng = random.Random(3)
    with Memory() as mem:
        mem.add_many({"subject": f"q{i}", "attribute": "v",
                      "value": "t" if rng.random() < 0.7 else f"w{s}{rng.randrange(4)}",
                      "source": s, "valid_from": "2026-01-01"}
                     for i in range(60) for s in "abcdef")
        mem.learn_from_agreement(dependence=True)
        assert all(p < 0.5 for p in mem._rel.book.dependence.values())


def _shared_claims(seed: int, n: int = 300, n_sources: int = 12) -> list[dict]:
    """Sources that err together: each question has its own spread of answers theta_i ~
    Dirichlet(4 base) over the truth "t" (base .7) and three wrong values, and every source
    answers from theta_i mixed with its own noise (0-30% uniform)."""
    rng = np.random.default_rng(seed)
    noise = rng.uniform(0.0, 0.3, n_sources)
    base = np.array([0.7, 0.1, 0.1, 0.1])
    facts = []
    for i in range(n):
        theta = rng.dirichlet(4.0 * base)
        for s in range(n_sources):
            v = int(rng.choice(4, p=(1 - noise[s]) * theta + noise[s] / 4))
            facts.append({"subject": f"q{i}", "attribute": "v",
                          "value": "t" if v == 0 else f"w{v}", "source": f"s{s}",
                          "valid_from": "2026-01-01"})
    return facts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correlated_claims_are_calibrated(seed: int, tmp_path: Path) -> None:
    """decide()'s probability when sources err together, 300 questions of 12 claims.
    Tolerance: ECE (10 equal-width bins) at least .02 lower with the correlation of claims
    learned (default) than without it, and <= .07 (5 seeds: .080-.117 without, .022-.066
    with); accuracy within .01 (near-ties can turn: the averaged draws are tempered). The
    learned correlation is journalled."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    facts = _shared_claims(seed)
    result = {}
    for correlation in (False, True):
        with Memory(tmp_path / f"{correlation}.db") as mem:
            mem.add_many(facts)
            mem.learn_from_agreement(correlation=correlation)
            result[correlation] = [mem.decide(f"q{i}", "v", utility=answer)
                                   for i in range(300)]
    (before, after) = ([(d.value == "t", d.p) for d in result[c]] for c in (False, True))
    assert abs(sum(v for v, _ in before) - sum(v for v, _ in after)) <= 3
    e0 = ece([p for _, p in before], [ok for ok, _ in before])
    e1 = ece([p for _, p in after], [ok for ok, _ in after])
    assert e1 <= e0 - 0.02 and e1 <= 0.07
    with Memory(tmp_path / "True.db") as again:  # the correlation is journalled
        assert again.decide("q0", "v", utility=answer).p == result[True][0].p


def test_a_bad_correlation_prior_is_refused_on_import(tmp_path: Path) -> None:
    from truthkeeper import InvalidFact, Memory

    for rho in (7, -0.1, True, "0.2"):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1,
                                   "body": {"source_prior": {}, "correlation": rho}}) + "\n")
        with Memory() as mem, pytest.raises(InvalidFact, match="correlation"):
            mem.import_jsonl(bad)


def _scattered(seed: int, sources: int, right: float, n: int = 150,
               common: int | None = None) -> list[dict]:
    """Independent sources, each right with probability ``right``; a wrong claim is one of
    five values of the source's own (scattered errors), or with ``common`` one of that
    many wrong values shared by all (errors that coincide without copying)."""
    import random

    rng = random.Random(seed)
    return [{"subject": f"q{i}", "attribute": "v",
             "value": "t" if rng.random() < right else (
                 f"w{s}{rng.randrange(5)}" if common is None else f"w{rng.randrange(common)}"),
             "source": f"s{s}", "valid_from": "2026-01-01"}
            for i in range(n) for s in range(sources)]


@pytest.mark.parametrize(("seed", "sources", "right"), [(0, 4, 0.7), (1, 6, 0.6), (2, 8, 0.5)])
@pytest.mark.parametrize("dependence", [False, True])
def test_scattered_errors_are_read_as_such(seed: int, sources: int, right: float,
                                          dependence: bool, tmp_path: Path) -> None:
    """Independent sources whose wrong claims scatter over many values, 150 questions.
    Tolerance: accuracy >= .94 and ECE (10 equal-width bins) <= .05 (measured: .947-.98,
    ECE .004-.028). When a wrong claim could only be one of the other claimed values, the
    fit slid to reading agreement as weak evidence: accuracy .92 / .17 / .08 (majority vote
    .93-.99), ECE .41-.49; and with dependence every pair of these independent sources read
    as copies. The size of the domain of false values is learned and journalled."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    with Memory(tmp_path / "m.db") as mem:
        mem.add_many(_scattered(seed, sources, right))
        est = mem.learn_from_agreement(dependence=dependence)
        ds = [mem.decide(f"q{i}", "v", utility=answer) for i in range(150)]
        n_false = mem._rel.book.false_values
        assert not mem._rel.book.dependence or max(mem._rel.book.dependence.values()) < 0.5
    ok = [d.value == "t" for d in ds]
    assert sum(ok) / 150 >= 0.94 and ece([d.p for d in ds], ok) <= 0.05
    assert n_false >= 64 and all(abs(a - right) < 0.12 for a in est.values())
    with Memory(tmp_path / "m.db") as again:  # journalled
        assert again.decide("q0", "v", utility=answer).p == ds[0].p


@pytest.mark.parametrize(("common", "seed"), [(1, 0), (1, 1), (2, 0), (2, 1)])
def test_common_wrong_values_are_counted(common: int, seed: int) -> None:
    """Where wrong claims coincide (one or two wrong values that every source may give), the
    number of false values learned is that number, and decide() is calibrated on 300
    questions of 4 sources at .7. Tolerance: ECE (10 equal-width bins) <= .06 (measured
    over 4 seeds: .018-.055 for one wrong value, .016-.043 for two). Before, two common
    wrong values were read as one (N = 1) with every claim's evidence tempered (rho = 1):
    ECE .27, mean p .58 at accuracy .84."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    with Memory() as mem:
        mem.add_many(_scattered(seed, 4, 0.7, n=300, common=common))
        mem.learn_from_agreement()
        assert mem._rel.book.false_values == common
        decisions = [mem.decide(f"q{i}", "v", utility=answer) for i in range(300)]
    assert ece([d.p for d in decisions], [d.value == "t" for d in decisions]) <= 0.06


@settings(max_examples=150, deadline=None, derandomize=True)
@given(others=st.lists(st.integers(0, 3), min_size=0, max_size=6),
       accs=st.lists(st.floats(0.05, 0.95), min_size=7, max_size=7),
       n_false=st.sampled_from([1.0, 2.0, 3.0, 16.0, 1024.0]),
       rho=st.sampled_from([0.0, 0.1, 1.0]))
def test_a_claim_is_predicted_by_a_probability_distribution(
        others: list[int], accs: list[float], n_false: float, rho: float) -> None:
    """The criterion that learns N and rho scores each claim by P(claim | the other claims
    of its slot). Over every outcome (repeating one of the values the others name, or naming
    a new one) these must sum to 1, whatever N, rho and the accuracies. (They summed to
    more than 1 when the others name several values and N is small: a new value was scored
    with a larger domain than a repeated one, which favoured N = 1.)"""
    from truthkeeper.reliability.open_values import claim_predictions

    named = sorted(set(others))
    total = 0.0
    for outcome in [*named, max(named, default=-1) + 1]:
        raw = [*others, outcome]
        index = {v: i for i, v in enumerate(dict.fromkeys(raw))}
        cc = np.array([index[v] for v in raw])
        p = claim_predictions(np.zeros(len(raw), dtype=int), cc, np.array([len(index)]),
                              np.array(accs[:len(raw)]), n_false, np.array([rho]))
        total += float(p[0, -1])  # the last claim, given the others
    assert total == pytest.approx(1.0, abs=1e-9)


def test_false_values_by_hand() -> None:
    """Two sources of reliability ~.6 agree on a value: with one false value
    (N = 1), .36 / (.36 + .4^2) = .69; with 100, two wrong sources agreeing by chance is
    rare: .36 / (.36 + 100 (.4 / 100)^2) = .996."""
    from truthkeeper.reliability.book import ReliabilityBook
    from truthkeeper.reliability.conflict import claim_probabilities

    book = ReliabilityBook(("unverified",))
    book.tier_prior["unverified"] = (0.6, 1e6)  # reliability .6, certainly
    claims = [("x", [("a", "unverified"), ("b", "unverified")])]
    assert claim_probabilities(book, claims)[0][0] == pytest.approx(0.36 / 0.52, abs=0.005)
    book.false_values = 100.0
    assert claim_probabilities(book, claims)[0][0] == pytest.approx(0.36 / 0.3616, abs=0.002)
    # two values, two sources each: the unclaimed 99 share what the claims leave
    claims = [("x", [("a", "unverified"), ("b", "unverified")]),
              ("y", [("c", "unverified"), ("d", "unverified")])]
    [(px, _), (py, _)] = claim_probabilities(book, claims)
    assert px == pytest.approx(py, abs=0.005) and px + py > 0.99


def test_a_bad_false_values_prior_is_refused_on_import(tmp_path: Path) -> None:
    from truthkeeper import InvalidFact, Memory

    for n in (0.5, -3, True, "8", float("nan"), float("inf")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1,
                                   "body": {"source_prior": {}, "false_values": n}}) + "\n")
        with Memory() as mem:
            with pytest.raises(InvalidFact, match="false_values"):
                mem.import_jsonl(bad)
            assert mem._rel.book.false_values == 1.0


def _two_attributes(seed: int, n: int = 300) -> list[dict]:
    """Five sources (right .6-.8) state a price, whose wrong values scatter, and a yes/no
    flag, whose wrong value is the other answer, about the same n subjects."""
    import random

    rng = random.Random(seed)
    facts = []
    for i in range(n):
        for s, right in enumerate((0.8, 0.7, 0.7, 0.6, 0.75)):
            price = 100 + i if rng.random() < right else rng.randrange(10**6)
            flag = "yes" if rng.random() < right else "no"
            facts += [{"subject": f"q{i}", "attribute": a, "value": v, "source": f"s{s}",
                       "valid_from": "2026-01-01"} for a, v in (("price", price),
                                                                ("flag", flag))]
    return facts


@pytest.mark.parametrize("seed", [0, 1])
def test_each_attribute_learns_its_own_domain_of_false_values(seed: int,
                                                              tmp_path: Path) -> None:
    """One memory, two attributes whose errors differ: each learns its own number of false
    values (and correlation), journalled; an attribute with few claims (fewer than
    ``MIN_OWN_CLAIMS``) shares the memory-wide ones. Tolerance: the price's ECE <= .03 (3 seeds:
    .001-.003); with one N for the memory (2, learned from both), .08-.09. The flag gets
    what it gets alone (ECE .06-.08 either way)."""
    from truthkeeper import Memory
    from truthkeeper.reliability.calibration import ece
    from truthkeeper.results import Utility

    answer = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
    few = [{"subject": f"q{i}", "attribute": "nickname", "value": "x", "source": f"s{s}",
            "valid_from": "2026-01-01"} for i in range(4) for s in range(5)]
    with Memory(tmp_path / "m.db") as mem:
        mem.add_many(_two_attributes(seed) + few)
        mem.learn_from_agreement()
        learned = mem._rel.book.open_values
        prices = [mem.decide(f"q{i}", "price", utility=answer) for i in range(300)]
    assert learned["price"][1] >= 64 and learned["flag"][1] == 1
    assert "nickname" not in learned  # 20 claims: it shares the memory-wide values
    assert ece([d.p for d in prices], [d.value == 100 + i for i, d in enumerate(prices)]
               ) <= 0.03
    with Memory(tmp_path / "m.db") as again:  # journalled
        assert again._rel.book.open_values == learned
        assert again.decide("q0", "price", utility=answer).p == prices[0].p


def test_a_bad_open_values_prior_is_refused_on_import(tmp_path: Path) -> None:
    from truthkeeper import InvalidFact, Memory

    for per_attr in ([], {"a": 0.5}, {"a": [0.5]}, {"a": [2, 4]}, {"a": [0.1, 0.5]},
                     {"a": [0.1, True]}, {"a": [float("nan"), 4]}, {"a": ["0.1", 4]}):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1, "body": {
            "source_prior": {}, "false_values": 2, "open_values": per_attr}}) + "\n")
        with Memory() as mem:
            with pytest.raises(InvalidFact, match="open_values"):
                mem.import_jsonl(bad)
            assert mem._rel.book.open_values == {} and mem._rel.book.false_values == 1.0


def test_a_bad_dependence_prior_is_refused_on_import(tmp_path: Path) -> None:
    from truthkeeper import InvalidFact, Memory

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"kind": "prior", "recorded_at": 1,
                               "body": {"dependence": [["a", "b", 7]]}}) + "\n")
    with Memory() as mem, pytest.raises(InvalidFact, match="dependence"):
        mem.import_jsonl(bad)


def test_resolve_context_calibrates_the_models_stated_confidence() -> None:
    import random

    from truthkeeper import InvalidFact, Memory
    from truthkeeper.reliability.context import calibration_map

    rng = random.Random(0)
    over = [(c, rng.random() < c ** 3) for c in (rng.uniform(0.5, 1) for _ in range(400))]
    slope, intercept = calibration_map(over)
    assert slope * 2.2 + intercept < 2.2  # an overconfident model: 0.9 maps below 0.9
    fair = [(c, rng.random() < c) for c in (rng.uniform(0.5, 1) for _ in range(2000))]
    s2, i2 = calibration_map(fair)
    assert abs(s2 - 1) < 0.25 and abs(i2) < 0.25  # a calibrated one stays about as it is
    with Memory() as mem:
        ask = {"question": "q", "context_value": "A", "context_source": "kb",
               "parametric_value": "B", "parametric_confidence": 0.9}
        for _ in range(20):
            mem.record_source_outcome("kb", correct=True, tier="unverified")
        before = mem.resolve_context(**ask)
        for c, ok in over:
            mem.record_source_outcome("model:parametric", correct=ok, confidence=c)
        after = mem.resolve_context(**ask)
        # at face value the model's 0.9 wins; once "0.9" is known to mean about 0.73 the
        # reliable context does
        assert (before.value, after.value) == ("B", "A")
        with pytest.raises(InvalidFact, match="confidence"):
            mem.record_source_outcome("model:parametric", correct=True, confidence=1.5)


def test_a_table_without_claims_is_passed_over(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in (("bare", "src\ns1\n"), ("empty", ""), ("no_values", "src,item\ns1,a\n")):
        (tmp_path / name).mkdir()
        for f in ("dirty.csv", "clean.csv"):
            (tmp_path / name / f).write_text(text)
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["sets"] == {}
    for name in ("bare", "empty", "no_values"):
        assert f"skipping {name}: no gold value" in captured.err


def test_eval_truth_reports_a_claim_the_memory_refuses(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An item key longer than a subject may be: truthkeeper's runs say why they have no
    figures, the baselines still run."""
    d = tmp_path / "long_keys"
    d.mkdir()
    key = "k" * 600
    (d / "claims.tsv").write_text(f"s1\t{key}\tx\ns2\t{key}\tx\ns1\tshort\ty\n")
    (d / "gold.tsv").write_text(f"{key}\tx\nshort\ty\n")
    assert main(["eval", "truth", "--data", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["sets"]["long_keys"]
    assert out["majority_vote"]["accuracy"] == 1.0
    assert "InvalidFact" in out["truthkeeper"]["error"]
