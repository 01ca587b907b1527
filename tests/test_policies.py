"""Custom policies and truthkeeper.testing (issue 14)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from truthkeeper import Candidate, Memory, Policy, PolicyError, RuleEvaluationError
from truthkeeper.cli import main
from truthkeeper.testing import SHIPPED_EXPECTATIONS, check_policy

T = "2026-11-{:02d}T10:00:00Z".format
ERRATUM = """
% an erratum wins whatever its time; otherwise the shipped tie rule decides
dominates(F, G) :- meta(F, erratum, @(true)), \\+ meta(G, erratum, @(true)).
dominates(F, G) :- \\+ meta(G, erratum, @(true)), newer(F, G).
"""
OLDER_WINS = """
dominates(F, G) :- rank(F, R), rank(G, R), valid_from(F, TF), valid_from(G, TG), TF < TG.
"""


def _erratum_story(mem: Memory) -> None:
    mem.add("acme", "total", 4500, source="billing", valid_from=T(2), meta={"erratum": True})
    mem.add("acme", "total", 4700, source="crm", valid_from=T(5))
    mem.add("acme", "total", 4100, source="crm", valid_from=T(1))


def test_a_custom_policy_decides_and_round_trips_through_the_journal(tmp_path: Path) -> None:
    policy = Policy.from_prolog("test_erratum_wins", ERRATUM, meta_keys=["erratum"])
    db = tmp_path / "m.db"
    with Memory(db, policy=policy) as mem:
        _erratum_story(mem)
        r = mem.current("acme", "total")
        assert (r.status, r.value) == ("resolved", 4500)
        assert mem.as_of("acme", "total", valid_at=T(1)).value == 4100
        res = mem.filter([Candidate("acme", "total", 4700, T(5)),
                          Candidate("acme", "total", 4100, T(1))])
        assert res.kept == ()  # the erratum head of the memory dominates both
        assert [d.dominated_by.value for d in res.dropped if d.item.value == 4700] == [4500]
        live = [(f.value, f.status) for f in mem.history("acme", "total")]
    # a fresh process knows nothing of the policy: the journal brings it back
    code = textwrap.dedent(f"""
        from truthkeeper import Memory
        with Memory({str(db)!r}, policy="test_erratum_wins") as mem:
            print(mem.current("acme", "total").value,
                  [(f.value, f.status) for f in mem.history("acme", "total")],
                  mem.as_of("acme", "total", valid_at="2026-11-01T10:00:00Z").value)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == f"4500 {live} 4100"
    with pytest.raises(PolicyError, match="journal was created with"):
        Memory(db)  # the default policy is not the journal's


def test_a_policy_that_raises_is_stopped_and_changes_nothing() -> None:
    bad = Policy.from_prolog("test_divides_by_zero",
                             "dominates(F, G) :- valid_from(F, T), X is T / 0, X > 1.")
    mem = Memory(policy=bad)
    mem.add("a", "b", 1, source="s", valid_from=T(1))
    with pytest.raises(RuleEvaluationError, match="test_divides_by_zero"):
        mem.add("a", "b", 2, source="s", valid_from=T(2))
    assert len(mem) == 1 and mem.current("a", "b").value == 1


@pytest.mark.parametrize("text, match", [
    ("dominates(F, G) :- dominates(G, F).", "may not call"),   # recursion: a loop
    ("dominates(F, G) :- shell(F).", "may not call"),
    ("winner(F) :- newer(F, _).", "clauses dominates"),
    ("dominates(F, G) :- newer(F, G", "Syntax|syntax|parse"),
])
def test_a_policy_that_could_loop_or_escape_is_refused(text: str, match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        Policy.from_prolog(f"test_refused_{abs(hash(text))}", text)


def test_a_name_is_taken_once() -> None:
    Policy.from_prolog("test_once", OLDER_WINS)
    Policy.from_prolog("test_once", OLDER_WINS)  # the same text again: fine
    with pytest.raises(PolicyError, match="exists already"):
        Policy.from_prolog("test_once", ERRATUM, meta_keys=["erratum"])
    with pytest.raises(PolicyError, match="exists already"):
        Policy.from_prolog("temporal", OLDER_WINS)


@pytest.mark.parametrize("name", sorted(SHIPPED_EXPECTATIONS))
def test_the_shipped_policies_pass_the_checker(name: str) -> None:
    report = check_policy(name, max_examples=25)
    assert report.ok, str(report)
    assert {r.name for r in report.results if r.ok} == SHIPPED_EXPECTATIONS[name]


def test_the_checker_finds_a_broken_policy() -> None:
    broken = Policy.from_prolog("test_older_wins", OLDER_WINS)
    report = check_policy(broken, max_examples=100)
    assert not report.ok
    failed = {r.name: r for r in report.results if not r.ok}
    assert "chain_collapses" in failed
    values, tier, order = failed["chain_collapses"].counterexample
    assert len(values) == 3 and sorted(order) == [0, 1, 2]


def test_check_policy_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, broken = tmp_path / "erratum_cli.pl", tmp_path / "older_cli.pl"
    good.write_text(ERRATUM)
    broken.write_text(OLDER_WINS)
    assert main(["check-policy", str(good), "--meta-keys", "erratum", "--examples", "25"]) == 0
    assert main(["check-policy", str(broken), "--examples", "50"]) == 1
    out = capsys.readouterr().out
    assert "policy erratum_cli: ok" in out and "policy older_cli: FAILED" in out
    assert "FAIL             chain_collapses" in out and "counterexample:" in out
