"""The command line: each command runs and prints what README says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from truthkeeper.cli import main


def test_selftest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["failed"] == 0 and out["passed"] >= 40


def test_demo_tells_the_story(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for text in ("Seed 003", "authority_first", "history: 100 [superseded], 120 [superseded], "
                 "135 [head]", "drop log", "needs_vpn(ana)", "decide: answer 4500"):
        assert text in out


def test_bench_perf_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "perf", "--n", "2000", "--repeat", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    add = out["add_many_facts_per_s"]
    assert add["n"] == 2000 and len(add["runs"]) == 3  # the arguments were honoured
    assert add["median"] == sorted(add["runs"])[1]  # a median, not one run
    assert {"current_us", "filter_50_candidates_us", "filter_store_ids_us"} <= out.keys()
    filters = out["filter_50_items_us"]
    assert {f"{k}_{n}_slots_us" for k in ("candidates", "ids") for n in (10, 50)} <= \
        filters.keys()
    parts = filters["parts_of_candidates_50_slots_us"]
    # the floor: the round trip of the inputs alone costs less than the call that decides
    assert 0 < parts["janus_round_trip_of_the_inputs"] < parts["prolog_call"]
    first = out["current_first_read_us"]
    assert 0 < first["p50"] <= first["p99"] and first["slots"] == 400
    decide = out["decide_conflict_ms"]
    assert decide["open_values"] > 0 and decide["categorical"] > 0
    assert {"linked_first_read_ms", "linked_retract_ms"} <= out["chains"].keys()
    shapes = out["shapes"]  # each at two sizes (a tenth of them for a small --n)
    assert shapes["join_what_if_ms"]["size_ratio"] == 870 / 90
    assert all(s["time_ratio"] > 0 for s in shapes.values())
    assert out["timed_slot"]["history_ms"] > 0
    assert out["timed_slot"]["filter_50_ids_ms"] > 0 and out["timed_slot"]["get_50_ms"] > 0
    assert out["tied_slot"]["first_read_ms"] > 0 and out["tied_slot"]["claims"] == 2000


def test_bench_journal_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "journal", "--n", "2000", "--repeat", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    rate, reopen = out["durable_add_many_facts_per_s"], out["reopen_seconds"]
    assert out["n"] == 2000 and len(rate["runs"]) == len(reopen["runs"]) == 3
    assert rate["median"] == sorted(rate["runs"])[1]
    assert reopen["facts_per_s"] == pytest.approx(2000 / reopen["median"])
    assert len(out["erase_subject_of_2000_facts_s"]["runs"]) == 3
    assert len(out["erase_slot_of_4000_facts_s"]["runs"]) == 3
    assert len(out["scopes_s"]["runs"]) == len(out["erase_scope_of_200_facts_s"]["runs"]) == 3


def test_eval_missing_data_is_a_clear_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "crowd", "--data", str(tmp_path / "none"), "--json"]) == 2
    assert "no data folder" in capsys.readouterr().err


def test_eval_without_data_names_where_to_get_it(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # a fresh clone: no --data, no TRUTHKEEPER_DATA; nothing is looked up beside the clone
    monkeypatch.delenv("TRUTHKEEPER_DATA", raising=False)
    for kind in ("crowd", "truth", "temporal"):
        assert main(["eval", kind, "--json"]) == 2
        err = capsys.readouterr().err
        assert "TRUTHKEEPER_DATA" in err and "--data DIR" in err and "Snow et al." in err


def test_eval_reads_the_folder_truthkeeper_data_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from truthkeeper.bench.samples import write_samples

    monkeypatch.setenv("TRUTHKEEPER_DATA", str(write_samples(tmp_path)))
    assert main(["eval", "truth", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["sets"]) == {"sample_books", "sample_flights"}
    for res in out["sets"].values():  # the generated sets can be learned: better than chance
        assert res["majority_vote"]["accuracy"] > 0.6


def _tiny_crowd(root: Path, items: int, workers: int) -> None:
    """A crowd set ``root/tiny``: two classes, every worker right but w2, always wrong."""
    d = root / "tiny"
    d.mkdir(parents=True)
    rows = ["question,worker,answer"] + [f"q{i},w{w},{(i + (w == 2)) % 2}"
                                         for i in range(items) for w in range(workers)]
    (d / "answer.csv").write_text("\n".join(rows) + "\n")
    (d / "truth.csv").write_text("question,truth\n" + "".join(f"q{i},{i % 2}\n"
                                                             for i in range(items)))


def test_eval_crowd_on_a_small_folder(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _tiny_crowd(tmp_path, 20, 3)
    assert main(["eval", "crowd", "--data", str(tmp_path), "--no-crowdkit", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"tiny"}
    assert out["tiny"]["accuracy"] == 1.0 and {"ece", "seconds"} <= set(out["tiny"])
    assert out["tiny"]["exact_posterior"]["accuracy"] == 1.0
    floor = out["tiny"]["ece_if_calibrated"]
    assert 0.0 <= floor["median"] <= floor["q95"] and 0.0 <= floor["p_value"] <= 1.0
    # worker 2 always disagrees: every item has a 2/3 majority, which the gold always is
    [share] = out["tiny"]["by_vote_share"]
    assert (share["share_from"], share["items"], share["gold_is_majority"]) == (0.6, 20, 1.0)
    assert share["accuracy"] == 1.0 and 0.5 < share["mean_p"] <= 1.0
    # squashing a right answer towards 1/K can only move its probability away from 1
    sm = out["tiny"]["uniform_smoothing_ece"]
    assert sm["0.05"] < sm["0.2"] < sm["0.4"]
    # blending in the vote share (2/3 on every item, always right) moves the ECE towards 1/3
    blend = out["tiny"]["vote_share_blend_ece"]
    assert blend["1.0"] == pytest.approx(1 / 3, abs=1e-4) and blend["0.0"] < blend["1.0"]
    # semi-supervised: five draws of the revealed items, their mean and spread
    semi = out["tiny"]["semi_supervised"]["20%"]
    assert semi["revealed"] == 4 and len(semi["draws"]) == 5
    assert semi["accuracy"] == pytest.approx(np.mean([d["accuracy"] for d in semi["draws"]]))
    assert semi["spread"]["ece"]["min"] <= semi["ece"] <= semi["spread"]["ece"]["max"]
    assert all(d["log_loss"] >= 0 and "ece_if_calibrated" in d for d in semi["draws"])
    # the vote share is a peer, scored as the model is, and sets the ECE bar here
    share_peer = out["tiny"]["peers"]["majority_vote_share"]
    assert share_peer["ece"] == pytest.approx(1 / 3)
    assert share_peer["log_loss"] == pytest.approx(-np.log(2 / 3))
    target = out["tiny"]["ece_target"]
    assert target == {"best_peer_ece": share_peer["ece"], "bar": share_peer["ece"],
                      "met": out["tiny"]["ece"] <= share_peer["ece"]}


def test_eval_crowd_halves_score_each_part_of_a_set(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """--halves: each set cut in two at random by items and by workers, every part scored
    as the set is (label-free, 10% revealed, the peers, the bar); a part with too few gold
    items says so."""
    from truthkeeper.reliability.crowd import halves, load_set

    _tiny_crowd(tmp_path, 24, 4)
    data = load_set(tmp_path / "tiny")
    for by in ("items", "workers"):
        a, b = halves(data, by, seed=0)
        assert len(a.label) + len(b.label) == len(data.label)
        if by == "items":  # no item in both, every gold label kept
            assert not set(a.items) & set(b.items) and len(a.gold) + len(b.gold) == 24
        else:
            assert not set(a.workers) & set(b.workers)
    assert main(["eval", "crowd", "--data", str(tmp_path), "--no-crowdkit", "--halves",
                 "--json"]) == 0
    parts = json.loads(capsys.readouterr().out)["tiny"]["halves"]
    assert set(parts) == {"items_0", "items_1", "workers_0", "workers_1"}
    for part in parts.values():
        assert part["gold"] >= 10 and "skipped" not in part
        assert {"accuracy", "ece", "log_loss", "ece_if_calibrated"} <= set(part)
        assert len(part["semi_supervised"]["10%"]["draws"]) == 5
        assert part["ece_target"]["bar"] >= 0.05 and "majority_vote_share" in part["peers"]
    assert parts["items_0"]["items"] + parts["items_1"]["items"] == 24
    small = tmp_path / "small"
    _tiny_crowd(small, 12, 3)  # 6 gold items a half: reported, not scored
    assert main(["eval", "crowd", "--data", str(small), "--no-crowdkit", "--halves",
                 "--json"]) == 0
    parts = json.loads(capsys.readouterr().out)["tiny"]["halves"]
    assert parts["items_0"]["skipped"] == "fewer than 10 gold items"


def test_eval_crowd_scores_crowdkit_peers_probabilities(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """crowd-kit's aggregators in the same run, each with its accuracy and the ECE of the
    probability it gives its answer; ``--slow-peers`` adds GLAD, MACE and one-coin DS."""
    pytest.importorskip("crowdkit")
    _tiny_crowd(tmp_path, 20, 3)
    assert main(["eval", "crowd", "--data", str(tmp_path), "--slow-peers", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["tiny"]
    peers = res["crowdkit"]
    assert set(peers) == {"MajorityVote", "DawidSkene", "GLAD", "MACE", "OneCoinDawidSkene"}
    assert peers["MajorityVote"]["accuracy"] == 1.0
    # two of three workers agree on every item: majority vote says 2/3 and is always right
    assert peers["MajorityVote"]["ece"] == pytest.approx(1 / 3)
    assert peers["MajorityVote"]["brier"] == pytest.approx(2 * (1 / 3) ** 2)
    assert all(0.0 <= p["ece"] <= 1.0 and p["log_loss"] >= 0.0 and "ece_if_calibrated" in p
               for p in peers.values())
    # every crowd-kit model is also among the peers that set the ECE bar
    assert {f"crowdkit_{k}" for k in peers} < set(res["peers"])
    assert res["ece_target"]["best_peer_ece"] == min(p["ece"] for p in res["peers"].values())


def test_eval_decide_on_a_small_folder(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Three workers always right, one always wrong: both models find the truth after
    learning from agreement; the JSON has each model's three stages and the per-seed
    figures after confirming 10%."""
    _tiny_crowd(tmp_path, 30, 4)
    assert main(["eval", "decide", "--data", str(tmp_path), "--seeds", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["tiny"]
    for model in ("categorical", "open"):
        assert set(out[model]) == {"prior", "agreement", "outcomes"}
        assert out[model]["agreement"]["accuracy"] == 1.0
        assert out[model]["agreement"]["items"] == 27  # 10% revealed
        floor = out[model]["agreement"]["ece_10_if_calibrated"]
        assert 0.0 <= floor["median"] <= floor["q95"] and 0.0 <= floor["p_value"] <= 1.0
    assert len(out["outcomes_by_seed"]["ece_10_equal_width"]) == 2


def test_bench_shadowing_reproduces_recall_decay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "shadowing", "--entities", "60", "--k", "10"]) == 0
    out = json.loads(capsys.readouterr().out)["ratios"]
    worst = out["200:2"]
    assert worst["majority_vote_accuracy_raw"] == 0.0
    assert worst["wrong_after_store_filter"] == 0.0 and worst["current_accuracy"] == 1.0
    for r in out.values():
        # Phi_T answers right exactly when a current fact was retrieved, else the stale one
        assert r["accuracy_after_phi_t"] + r["wrong_after_phi_t"] == pytest.approx(1.0)
        assert r["accuracy_after_phi_t"] >= r["majority_vote_accuracy_raw"]
        assert r["accuracy_after_store_filter"] == r["accuracy_after_phi_t"]
    assert out["10:2"]["theory_kM_over_N_plus_M"] == pytest.approx(10 * 2 / 12)


def test_bench_provenance_reproduces_seed_003(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "provenance", "--n", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    for d in ("2", "3", "4", "5", "6"):
        acc = out["depth"][d]
        assert (acc["temporal"], acc["authority_first"], acc["temporal_within_authority"]) \
            == (0.0, 1.0, 1.0)
        assert acc["random"] == pytest.approx(1 / int(d), abs=0.2)
    sweep = out["inversion_sweep"]
    assert sweep["0.0"]["authority_first"]["accuracy"] == 1.0
    assert sweep["0.5"]["authority_first"]["accuracy"] < 0.7
    assert sweep["0.5"]["temporal_within_authority"]["accuracy"] > \
        sweep["0.5"]["authority_first"]["accuracy"]
    for rho, acc in out["density"].items():
        assert acc["temporal"] == pytest.approx(1 - float(rho), abs=0.02)
        assert acc["authority_first"] == 1.0
    inv = out["inversion_20pct"]
    assert inv["authority_first"]["accuracy"] == pytest.approx(0.8, abs=0.02)
    assert inv["temporal_within_authority"]["accuracy_last_two_thirds"] > 0.95


def test_bench_context_reproduces_seed_002(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "context", "--n", "120", "--plot", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    regret = out["mean_regret"]
    # a learned prior beats every fixed rule over the range of rho (the seed's claim)
    assert regret["truthkeeper"] < min(regret[s] for s in
                                       ("always_context", "always_model",
                                        "context_unless_confident"))
    # its probabilities are calibrated (ECE over the fixed-rho runs: .051 here, .023 at
    # the default n = 300; the exact posterior: .025)
    assert out["calibration"]["fixed_rho"]["truthkeeper"]["all"]["ece"] <= 0.08
    assert out["fixed_rho"]["0.00"]["always_context"] == 0.0
    assert out["fixed_rho"]["1.00"]["always_context"] == 1.0
    assert (tmp_path / "seed002_context.png").stat().st_size > 10_000


def test_bench_shadowing_text_follows_the_theory(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "shadowing-text", "--entities", "20", "--plot", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    at_1_1, at_100_1 = (out["ratios"][r]["buffer_0"]["10"] for r in ("1:1", "100:1"))
    assert at_1_1["standard"]["current_retrieved"] == pytest.approx(2.0)
    assert at_100_1["standard"]["current_retrieved"] <= 0.5  # recall decays
    assert at_100_1["standard"]["majority_accuracy"] == 0.0  # the majority vote trap
    assert at_100_1["truthkeeper"]["majority_accuracy"] == 1.0
    assert len(list(tmp_path.glob("seed000_shadowing_*.png"))) == 6


def test_bench_scale_reports_ingest_reopen_and_rss(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    assert main(["bench", "scale", "--sizes", "3000", "--plot", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    out = json.loads(text)["sizes"]["3000"]
    assert out["ingest_facts_per_s"] > 0
    for mode in ("lazy", "full"):
        assert 0 < out[mode]["first_answer_s"] < 60
        assert out[mode]["rss_after_reads_mb"] >= out[mode]["rss_after_open_mb"] > 10
        first = out[mode]["first_read_us"]  # 10,000 reads of 600 slots: each read first once
        assert first["slots"] == 600 and 0 < first["p50"] <= first["p99"]
    assert out["lazy"]["rss_all_loaded_mb"] >= out["lazy"]["rss_after_reads_mb"]
    assert (tmp_path / "bench_scale.png").stat().st_size > 10_000
    # a saved run is redrawn without running again; anything else is refused
    saved = tmp_path / "run.json"
    saved.write_text(text, encoding="utf-8")
    (tmp_path / "bench_scale.png").unlink()
    assert main(["bench", "scale", "--from", str(saved), "--plot", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(text)
    assert (tmp_path / "bench_scale.png").exists()
    saved.write_text("[1, 2]", encoding="utf-8")
    assert main(["bench", "scale", "--from", str(saved)]) == 2
    assert "not a saved scale run" in capsys.readouterr().err


def test_bench_scale_on_postgresql(capsys: pytest.CaptureFixture[str], pg_admin: str) -> None:
    assert main(["bench", "scale", "--sizes", "2000", "--modes", "lazy", "--db", pg_admin]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["journal"] == "postgresql"
    row = out["sizes"]["2000"]
    assert row["journal_mb"] > 0 and set(row) >= {"lazy"} and "full" not in row
    assert 0 < row["lazy"]["first_answer_s"] < 60
    assert row["lazy"]["rss_all_loaded_mb"] >= row["lazy"]["rss_after_open_mb"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_bench_writers_loses_no_acknowledged_write(
        capsys: pytest.CaptureFixture[str], backend: str, request: pytest.FixtureRequest) -> None:
    """Three processes write single facts to one journal for a second: every write they
    were told was kept is in the journal afterwards, and the chain verifies."""
    db = ["--db", request.getfixturevalue("pg_admin")] if backend == "postgresql" else []
    assert main(["bench", "writers", "--processes", "3", "--seconds", "1", *db]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["journal"] == backend and out["processes"] == 3
    assert out["writes"] == sum(out["per_process"]) > 0 and all(out["per_process"])
    assert out["lost"] == 0 and out["chain_verifies"] is True


@pytest.mark.parametrize("bench", ["journal", "scale", "writers"])
def test_a_benchmark_database_that_cannot_be_reached_is_a_clear_error(
        bench: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg")
    url = "postgresql://nobody:secret@127.0.0.1:1/x"  # nothing listens on port 1
    size = {"journal": ["--n", "10"], "scale": ["--sizes", "10"],
            "writers": ["--processes", "1"]}[bench]
    assert main(["bench", bench, *size, "--db", url]) == 2
    err = capsys.readouterr().err
    assert "cannot create a benchmark database" in err and "secret" not in err


def test_probes_measure_their_own_peak_rss_not_the_parents() -> None:
    """getrusage's ru_maxrss in a child counts the parent's size at fork: a probe run from a
    benchmark holding 300 MB would report at least 300 MB (the bug this fixes)."""
    import subprocess
    import sys

    from truthkeeper.bench import PEAK_RSS_CODE

    ballast = bytearray(300 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    out = subprocess.run([sys.executable, "-c", PEAK_RSS_CODE + "print(peak_rss_mb())"],
                         capture_output=True, text=True, check=True).stdout
    assert 1 < float(out) < 100
    del ballast


def test_bench_peers_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    if not all(importlib.util.find_spec(m) for m in ("memvara", "veritas", "pysqlite3")):
        pytest.skip("the bench extra is not installed")  # not imported here: see peers.py
    import sys

    before = sys.modules["sqlite3"]
    assert main(["bench", "peers", "--subjects", "60", "--veritas-subjects", "20",
                 "--rounds", "1"]) == 0
    # memvara's pysqlite3 stood for sqlite3 only while memvara was loaded: a second copy
    # of SQLite left in its place would drop the locks of this process's journals
    assert sys.modules["sqlite3"] is before
    out = json.loads(capsys.readouterr().out)
    assert set(out["peers"]) == {"truthkeeper", "memvara", "veritas-tms"}
    tk = out["peers"]["truthkeeper"]
    # truthkeeper answers every slot with its intended value: lower-trust claims newer than
    # the head do not win; memvara takes the newest write in 10% of the slots
    assert tk["agreement"] == 1.0
    assert out["peers"]["memvara"]["agreement"] < 1.0
    for peer in out["peers"].values():
        assert peer["first"] is not None and 1 < peer["rss_after_1k_reads_mb"] < 2000
        assert peer["current_us"] > 0 and peer["filter_50_us"] > 0
    assert set(out["how"]) == set(out["peers"])
    assert out["ratios"]["current_us"]["best_peer"] in ("memvara", "veritas-tms")


@pytest.mark.parametrize("args", [["bench", "perf", "--repeat", "0"],
                                  ["bench", "fit", "--sources", "-3"],
                                  ["bench", "slot", "--sizes", "10,0"],
                                  ["bench", "agreement", "--slots", "many"],
                                  ["bench", "context", "--n", "0"],
                                  ["eval", "decide", "--seeds", "0"]])
def test_a_bad_count_is_refused_with_what_is_wrong(args: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A count of zero or less, or no number, is a usage error (exit 2) naming the
    argument; it reached a benchmark and crashed there (no median of nothing)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    assert "expected a whole number of at least 1" in capsys.readouterr().err


def test_inspect_shows_what_was_learned_from_agreement(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from truthkeeper import Memory

    from .test_truth import _two_attributes

    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add_many(_two_attributes(0, n=60))
    assert main(["inspect", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["learned"] is None
    assert main(["inspect", str(db)]) == 0
    assert "learned from agreement: nothing yet" in capsys.readouterr().out
    with Memory(db) as mem:
        mem.learn_from_agreement()
    assert main(["inspect", str(db), "--json"]) == 0
    learned = json.loads(capsys.readouterr().out)["learned"]
    assert learned["sources"] == 5 and set(learned["by_attribute"]) == {"flag", "price"}
    assert learned["by_attribute"]["price"]["false_values"] >= 64
    assert main(["inspect", str(db)]) == 0
    assert "  price: correlation" in capsys.readouterr().out


def test_bench_agreement_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "agreement", "--slots", "400", "--repeat", "2", "--dependence"]) == 0
    out = json.loads(capsys.readouterr().out)
    multi, agent = out["multi"], out["agent"]
    assert multi["facts"] == 2000 and agent["slots"] == 1200
    assert len(multi["plain"]["runs_s"]) == 2 and agent["dependence"]["median_s"] > 0
    # three wrong values shared by every source: the fit counts them
    assert multi["plain"]["false_values"] == 3.0


def test_bench_fit_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "fit", "--sources", "60", "--repeat", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["svi_refit_s"]["median"] > 0 and out["svi_first_call_s"] > 0
    means = out["svi_tier_means"]
    assert means["verified"] > means["agent"] > means["unverified"]


def test_eval_crowd_passes_over_sets_it_cannot_score(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An empty truth file, answers without rows, one class only, a Snow file without its
    columns: each is named on stderr and left out; the good set is scored."""
    _tiny_crowd(tmp_path, 20, 3)
    for name, answers, truth in (("empty_truth", "question,worker,answer\nq1,w1,a\n", ""),
                                 ("no_answers", "question,worker,answer\n", "q,t\nq1,a\n"),
                                 ("one_class", "question,worker,answer\nq1,w1,a\nq1,w2,a\n",
                                  "question,truth\nq1,a\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "answer.csv").write_text(answers)
        (tmp_path / name / "truth.csv").write_text(truth)
    (tmp_path / "bad.standardized.tsv").write_text("a\tb\n1\t2\n")
    (tmp_path / "long_keys").mkdir()  # an item name longer than a subject may be
    key = "q" * 600
    (tmp_path / "long_keys" / "answer.csv").write_text(
        f"question,worker,answer\n{key},w1,a\n{key},w2,b\nq2,w1,b\n")
    (tmp_path / "long_keys" / "truth.csv").write_text(f"question,truth\n{key},a\nq2,b\n")
    for command in (["eval", "crowd", "--no-crowdkit"], ["eval", "decide", "--seeds", "1"]):
        assert main([*command, "--data", str(tmp_path), "--json"]) == 0
        captured = capsys.readouterr()
        # eval crowd never stores the answers as facts: long keys are no matter there
        assert set(json.loads(captured.out)) == {"tiny"} | (
            {"long_keys"} if command[1] == "crowd" else set())
        assert ("skipping long_keys: InvalidFact" in captured.err) == (command[1] == "decide")
        for name in ("empty_truth", "no_answers", "one_class", "bad.standardized.tsv"):
            assert f"skipping {name}" in captured.err


def test_inspect_of_a_scope_shows_that_scopes_sources_and_rules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect --scope`` reports what the scope's view sees: its own sources and rules
    with the shared ones (it reported the shared layer's alone)."""
    from truthkeeper import Memory

    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add("acme", "ceo", "Ana", source="crm")
        ana = mem.scope("user:ana")
        ana.add("me", "city", "Lisbon", source="chat")
        ana.add_rule("local(X) :- holds(X, city, lisbon)")
    assert main(["inspect", str(db), "--scope", "user:ana", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(s["source"] for s in out["sources"]) == ["chat", "crm"]
    assert out["rules"] == ["local(X) :- holds(X, city, lisbon)"]
    assert main(["inspect", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["source"] for s in out["sources"]] == ["crm"] and out["rules"] == []
    assert out["scopes"] == ["user:ana"]  # the owner's listing, whichever view is shown
    assert main(["inspect", str(db)]) == 0
    text = capsys.readouterr().out  # what it counts, with scopes in the file: said
    assert "1 facts in 1 slots about 1 subjects in the shared layer\n" in text
    assert "scopes in the file: 1\n  user:ana" in text


def test_a_command_whose_reader_leaves_early_ends_quietly(tmp_path: Path) -> None:
    """``truthkeeper query m.db poll answer --history | head -1``: the reader closes the
    pipe before the output ends. The command died with a BrokenPipeError traceback; it now
    ends as a shell's SIGPIPE does (141), saying nothing."""
    import os
    import subprocess
    import sys

    from truthkeeper import Memory

    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add_many([{"subject": "poll", "attribute": "answer", "value": f"value {i}" * 5,
                       "source": f"s{i}"} for i in range(3000)])
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write that does not fit fails
    out = subprocess.run([sys.executable, "-m", "truthkeeper", "query", str(db), "poll",
                          "answer", "--history", "--json"], stdout=write,
                         stderr=subprocess.PIPE, text=True, check=False, timeout=300)
    os.close(write)
    assert (out.returncode, out.stderr) == (141, "")
