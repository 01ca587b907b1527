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


_PROBE = """
import json
from truthkeeper import Memory
from truthkeeper.logic import bridge
with Memory(policy="temporal") as m:
    m.add("ana", "city", "Lisbon", source="s", valid_from="2026-01-01")
    m.add("ana", "city", "Porto", source="s", valid_from="2026-06-01")
    value = m.current("ana", "city").value
print(json.dumps({"from": bridge.loaded_from, "value": value,
                  "plunit": bridge.run_plunit() if __import__("sys").argv[1] == "1" else None}))
"""


def _probe(cache: object, plunit: bool = False) -> dict[str, object]:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "TRUTHKEEPER_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", _PROBE, "1" if plunit else "0"], env=env,
                         capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _built(cache: object) -> list[object]:
    """The quick-load files once the build a process started has ended (it outlives it)."""
    import time
    from pathlib import Path

    d = Path(str(cache))
    deadline = time.monotonic() + 120
    while list(d.glob("*.building")) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sorted(d.glob("modules-*.qlf"))


def test_the_modules_load_from_a_quick_load_file_once_it_is_built(tmp_path) -> None:
    """The first process loads the Prolog modules from source and builds the quick-load
    file; the next loads that file, answers the same, and every plunit suite passes."""
    cache = tmp_path / "cache"
    assert _probe(cache) == {"from": "source", "value": "Porto", "plunit": None}
    assert len(_built(cache)) == 1
    again = _probe(cache, plunit=True)
    assert again["from"] == "qlf" and again["value"] == "Porto"
    passed, failed = again["plunit"]  # type: ignore[misc]
    assert failed == 0 and passed >= 40


def test_a_quick_load_file_is_not_used_from_a_shared_or_damaged_cache(tmp_path) -> None:
    """A cache directory others may write to is not read (it would hold code); a damaged
    file is set aside and the modules load from source."""
    cache = tmp_path / "cache"
    _probe(cache)
    [qlf] = _built(cache)
    cache.chmod(0o777)
    assert _probe(cache)["from"] == "source"
    cache.chmod(0o700)
    qlf.write_bytes(b"not a quick-load file")
    assert _probe(cache)["from"] == "source"
    _built(cache)
    assert _probe(cache)["from"] == "qlf"  # rebuilt by the process before


def test_a_process_that_ends_at_once_still_gets_its_quick_load_file_built(tmp_path) -> None:
    """A short process (a CLI command) ends long before the build it starts: the build
    still finishes, leaves no scratch directory or lock behind, and the process exits
    without a word on stderr."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {**os.environ, "TRUTHKEEPER_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", "from truthkeeper.logic import bridge; "
                          "bridge.load(); print(bridge.loaded_from)"], env=env,
                         capture_output=True, text=True, check=False, timeout=300)
    assert (out.returncode, out.stdout.strip(), out.stderr) == (0, "source", "")
    assert len(_built(cache)) == 1
    assert sorted(p.suffix for p in cache.iterdir()) == [".qlf"]


def test_a_quick_load_file_is_named_by_its_sources_and_swi_version(tmp_path) -> None:
    from pathlib import Path

    from truthkeeper.logic import modcache

    src = Path(engine.__file__).parent.parent / "prolog"
    for p in src.glob("*.pl"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    before = modcache.digest(tmp_path, "9.2.9")
    assert before == modcache.digest(src, "9.2.9") != modcache.digest(tmp_path, "9.3.0")
    (tmp_path / "store.pl").write_text((tmp_path / "store.pl").read_text() + "\n% x\n")
    assert modcache.digest(tmp_path, "9.2.9") != before
