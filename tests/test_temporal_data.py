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
