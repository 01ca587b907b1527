"""The janus boundary: the only module that imports ``janus_swi``.

Goals are constant strings naming predicates of ``prolog/truthkeeper.pl``; all data goes
through the ``inputs`` dict, so a value like ``x'), halt. %`` is only ever data. Prolog
errors become :class:`~truthkeeper.errors.PrologBridgeError` with the term kept.

The Prolog files are loaded once per process from the installed package
(``importlib.resources``).
"""

from __future__ import annotations

import importlib.resources
import itertools
import os
import shutil
import subprocess
import threading
from typing import Any

from .errors import PrologBridgeError

__all__ = ["ask", "ask_all", "load", "new_handle", "run_plunit"]

_lock = threading.RLock()
_loaded = False
_handles = itertools.count(1)
_janus: Any = None


def _ensure_swi_home() -> None:
    """Point janus at the ``swipl`` first on PATH when SWI_HOME_DIR is not set.

    janus-swi otherwise may pick the home of a different SWI-Prolog version and die with an
    "incompatible VM-signature" error.
    """
    if os.environ.get("SWI_HOME_DIR"):
        return
    swipl = shutil.which("swipl")
    if swipl is None:
        return
    try:
        out = subprocess.run(
            [swipl, "--dump-runtime-variables"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return
    for line in out.splitlines():
        if line.startswith("PLBASE="):
            os.environ["SWI_HOME_DIR"] = line.split("=", 1)[1].strip('";')


def load() -> None:
    """Import janus and consult ``truthkeeper.pl`` (idempotent, thread-safe)."""
    global _loaded, _janus
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _ensure_swi_home()
        try:
            import janus_swi
        except ImportError as exc:  # pragma: no cover - depends on the installation
            msg = (
                "janus_swi could not be imported; truthkeeper needs SWI-Prolog >= 9.1.12 and "
                "the janus-swi package built against it (run `make test` in the repository, "
                f"or see README 'Using truthkeeper from another project'): {exc}"
            )
            raise PrologBridgeError(msg) from exc
        _janus = janus_swi
        entry = importlib.resources.files("truthkeeper") / "prolog" / "truthkeeper.pl"
        with importlib.resources.as_file(entry) as path:
            try:
                janus_swi.query_once("use_module(File)", {"File": str(path)})
            except janus_swi.PrologError as exc:
                msg = f"loading {path} failed: {exc}"
                raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
        _loaded = True


def new_handle() -> int:
    """A fresh integer that keys one memory's data inside Prolog."""
    return next(_handles)


def ask(goal: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Run a deterministic goal once and return its bindings.

    Parameters
    ----------
    goal
        A constant goal string (never built from data).
    inputs
        The data, bound to the goal's variables by janus. A fresh dict each call.

    Raises
    ------
    PrologBridgeError
        When the goal raises a Prolog error or fails.
    """
    load()
    with _lock:
        try:
            result: dict[str, Any] = _janus.query_once(goal, dict(inputs))
        except _janus.PrologError as exc:
            msg = f"Prolog error in {goal.split('(')[0]}: {exc}"
            raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
    if not result.get("truth", False):
        msg = f"Prolog goal {goal.split('(')[0]} failed unexpectedly"
        raise PrologBridgeError(msg)
    return result


def ask_all(goal: str, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """All solutions of a goal (the iterator is always closed)."""
    load()
    with _lock:
        q = _janus.query(goal, dict(inputs))
        try:
            return [dict(s) for s in q]
        except _janus.PrologError as exc:
            msg = f"Prolog error in {goal.split('(')[0]}: {exc}"
            raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
        finally:
            q.close()


def run_plunit() -> tuple[int, int]:
    """Run every plunit suite shipped with the package; returns (passed, failed)."""
    r = ask("tk_run_tests(Passed, Failed)", {})
    return int(r["Passed"]), int(r["Failed"])
