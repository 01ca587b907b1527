"""Run every plunit suite through janus, so pytest covers the Prolog modules too."""

from __future__ import annotations

from truthkeeper.logic import bridge as engine


def test_every_plunit_suite_passes() -> None:
    passed, failed = engine.run_plunit()
    assert failed == 0, f"{failed} plunit test(s) failed; see the output above"
    assert passed >= 40  # the suites were found and ran


def test_plunit_failures_are_reported(tmp_path: object) -> None:
    # A deliberately failing unit must be counted as a failure by the same machinery.
    import pathlib

    p = pathlib.Path(str(tmp_path)) / "failing.plt"
    p.write_text(":- begin_tests(tk_failing_probe).\ntest(fails) :- 1 =:= 2.\n"
                 ":- end_tests(tk_failing_probe).\n")
    r = engine.ask("load_files(F, []), run_tests(tk_failing_probe, [summary(S)]), "
                   "get_dict(failed, S, N)", {"F": str(p)})
    assert r["N"] == 1
