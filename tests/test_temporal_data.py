"""The symbolic layer on real facts that changed over time (PAT-Questions, SituatedQA)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "temporal"


@pytest.mark.skipif(not (DATA / "pat").is_dir(), reason=f"PAT data not found at {DATA / 'pat'}")
def test_pat_heads_as_of_and_history() -> None:
    from truthkeeper.bench.temporal import evaluate_pat

    res = evaluate_pat(DATA / "pat")
    assert res["questions"] > 2000 and res["changed_2021_2023"] > 500
    assert res["head_accuracy"] == 1.0
    assert res["as_of_accuracy"] == 1.0
    assert res["history_in_order"] == 1.0


@pytest.mark.skipif(not (DATA / "situatedqa").is_dir(),
                    reason=f"SituatedQA data not found at {DATA / 'situatedqa'}")
def test_situatedqa_timelines() -> None:
    from truthkeeper.bench.temporal import evaluate_situatedqa

    res = evaluate_situatedqa(DATA / "situatedqa")
    assert res["questions"] > 500 and res["as_of_checks"] > 1000
    assert res["head_accuracy"] == 1.0
    assert res["as_of_accuracy_vs_timeline"] == 1.0


def test_temporal_sets_are_found_by_their_layout(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Dated snapshots under any folder name, any number of them from two, with month names
    long or short; a timeline file without a split in its name."""
    import json

    from truthkeeper.cli import main

    snaps = tmp_path / "wiki_snapshots"
    snaps.mkdir()
    answers = {"Sep2022-x.json": ["c", "c2"], "Jan2020.json": ["a", "a2"],
               "June2021_multihop.json": ["b", "a2"]}
    for name, (one, two) in answers.items():
        (snaps / name).write_text(json.dumps({
            "q1": {"text answers": [one]}, "q2": {"text answers": [two]},
            "q3": {"text answers": []}}))
    (snaps / "notes.json").write_text("{}")  # no date in its name: not a snapshot
    lines = tmp_path / "timelines"
    lines.mkdir()
    rec = {"id": 7, "timelines": [{"prev_answers": ["old"], "prev_start": {"year": 1990},
                                   "cur_answers": ["new"], "cur_start": {"year": 2018}}],
           "context_answer_pairs": [{"date": "2000", "answers": ["old"]}]}
    (lines / "raw_data.jsonl").write_text(json.dumps(rec) + "\n\n")
    assert main(["eval", "temporal", "--data", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    pat = out["wiki_snapshots"]
    assert pat["snapshots"] == ["2020-01-01T00:00:00Z", "2021-06-01T00:00:00Z",
                                "2022-09-01T00:00:00Z"]
    assert pat["questions"] == 2 and pat["facts"] == 6
    assert pat["changed_2020_2021"] == 1 and pat["changed_2021_2022"] == 2
    assert pat["head_accuracy"] == pat["as_of_accuracy"] == pat["history_in_order"] == 1.0
    sqa = out["timelines"]
    assert sqa["questions"] == 1 and sqa["as_of_checks"] == 1
    assert sqa["head_accuracy"] == sqa["as_of_accuracy_vs_timeline"] == 1.0
    # a set's own folder, given directly
    assert main(["eval", "temporal", "--data", str(snaps), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wiki_snapshots"] == {
        **pat, "load_seconds": pytest.approx(pat["load_seconds"], abs=60),
        "query_seconds": pytest.approx(pat["query_seconds"], abs=60)}


def test_temporal_sets_that_do_not_parse_are_passed_over(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from truthkeeper.cli import main

    for name, first in (("not_json", "{oops"), ("a_list", "[1, 2]")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "Jan2020.json").write_text(first)
        (tmp_path / name / "Jan2021.json").write_text(json.dumps({"q": {"text answers": ["a"]}}))
    (tmp_path / "lines").mkdir()
    (tmp_path / "lines" / "raw_data.jsonl").write_text('{"id": 1, "timelines": 5}\n')
    assert main(["eval", "temporal", "--data", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {}
    for name in ("not_json", "a_list", "lines"):
        assert f"skipping {name}" in captured.err
