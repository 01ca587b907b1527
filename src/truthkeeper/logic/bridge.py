"""The janus boundary: the only module that imports ``janus_swi``.

Goals are constant strings naming predicates of ``prolog/truthkeeper.pl``; all data goes
through the ``inputs`` dict, so a value like ``x'), halt. %`` is only ever data. The goals
of every read and write go by :func:`call` instead: a constant name that picks one goal
of ``prolog/fast.pl``'s fixed table, with the data as its arguments.

One error protocol: the Prolog modules raise ISO error terms (``existence_error``,
``permission_error``, ``domain_error``, ...); every goal runs inside ``catch/3`` and
``tk_error/3`` hands a caught term over as data, which :data:`ERRORS` (the one table) maps
to the truthkeeper error family. A term the table does not know becomes a
:class:`~truthkeeper.errors.PrologBridgeError` that keeps it.

The Prolog files are loaded once per process from the installed package
(``importlib.resources``), through the quick-load file :mod:`.modcache` keeps in the user's
cache once one is built.
"""

from __future__ import annotations

import importlib.resources
import itertools
import os
import shutil
import subprocess
import threading
from collections.abc import Iterable
from typing import Any

from ..errors import (
    CrossSlotSupersession,
    InvalidFact,
    PolicyError,
    PrologBridgeError,
    RuleEvaluationError,
    SupersessionCycle,
    TierInversion,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    UnknownRule,
    UnsafeRule,
)
from . import modcache

__all__ = ["ERRORS", "ask", "call", "load", "new_handle", "run_plunit"]

_lock = threading.RLock()
_thread = threading.local()  # ``initial``: whether this is Prolog's initial thread
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
        global loaded_from
        with importlib.resources.as_file(
                importlib.resources.files("truthkeeper") / "prolog") as path:
            try:
                loaded_from = modcache.load(janus_swi, path)
            except janus_swi.PrologError as exc:
                msg = f"loading {path / 'truthkeeper.pl'} failed: {exc}"
                raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
        _loaded = True


loaded_from: str | None = None
"""Where this process loaded the Prolog modules from: ``"qlf"`` (the quick-load file in the
user's cache, :mod:`~truthkeeper.logic.modcache`) or ``"source"``; None before."""


def new_handle() -> int:
    """A fresh positive integer that keys one memory's data inside Prolog (the plunit
    fixtures use negative handles, so they never touch a live memory)."""
    return next(_handles)


# (formal term name, first argument or None for any) -> (error class, message template).
# The template is formatted with the term's arguments as a0, a1, ... (a pair X-Y arrives
# as a tuple) and the Prolog context message as msg.
ERRORS: dict[tuple[str | None, ...], tuple[type[TruthkeeperError], str]] = {
    ("existence_error", "fact"): (UnknownFact, "{a1!r} names no fact of this memory"),
    ("existence_error", "rule"): (UnknownRule, "{a1!r} names no rule of this memory"),
    ("permission_error", "add"): (
        InvalidFact, "id {a2!r} is already used by another fact; ids must be unique"),
    ("permission_error", "reuse"): (
        TierNotAuthorized, "the signature nonce {a2!r} was already used (a replayed "
        "signature); sign the fact again"),
    ("permission_error", "retract"): (InvalidFact, "fact {a2!r} is already retracted"),
    ("permission_error", "end"): (
        InvalidFact, "fact {a2!r} is retracted: only a live fact can end"),
    ("domain_error", "valid_to_after_valid_from"): (
        InvalidFact, "valid_to must be after the valid_from of fact {a1!r}"),
    ("permission_error", "bind"): (
        TierNotAuthorized, "source {a2[0]!r} belongs to tier {a2[1]!r}: a source name keeps "
                           "one tier (use another source name for another tier)"),
    ("permission_error", "supersede"): (TruthkeeperError, ""),  # refined by _SUPERSEDE
    ("permission_error", "modify", "static_procedure"): (
        UnsafeRule, "rule head {a2} is reserved (a builtin or holds/3); name the derived "
                    "predicate differently"),
    ("permission_error", "modify", "policy"): (
        PolicyError, "a policy named {a2!r} exists already (shipped, or registered with "
                     "another text); choose another name"),
    ("permission_error", "call", "policy_goal"): (
        PolicyError, "policy body calls {a2}, which policies may not call (allowed: the "
                     "record accessors, newer/2, comparisons and arithmetic)"),
    ("permission_error", "call"): (
        UnsafeRule, "rule body calls {a2}, which rules may not call (allowed: holds/3, "
                    "rule heads, comparisons, arithmetic and a few pure builtins)"),
    ("syntax_error", None): (
        UnsafeRule, "the rule does not parse ({a0}); write one clause such as "
                    "'needs_vpn(U) :- holds(U, location, L), L \\== office'"),
    ("domain_error", "rule_head"): (UnsafeRule, "rule head {a1} is not a callable term"),
    ("domain_error", "one_clause"): (
        UnsafeRule, "the rule text holds more than one clause, or text after its clause; add "
                    "each rule with its own add_rule call"),
    ("domain_error", "singleton_free_rule"): (
        UnsafeRule, "the variable(s) {a1} appear only once, so the rule matches any value "
                    "there: a word starting with a capital letter is a Prolog variable. Write "
                    "a constant in lower case or quoted (globex, 'Globex Inc'), or use _ for "
                    "'any value'"),
    ("rule_error", None): (RuleEvaluationError, "{a0}"),
    ("domain_error", "policy"): (PolicyError, "no policy named {a1!r} is registered"),
    ("domain_error", "declared_meta_key"): (
        PolicyError, "the policy reads meta key {a1} that it does not declare (it would never "
                     "see it): pass meta_keys=[...] with every key it reads"),
    ("domain_error", "policy_clause"): (
        PolicyError, "a policy is made of clauses dominates(F, G) :- Body; got {a1}"),
    ("type_error", None): (InvalidFact, "expected {a0}, got {a1}"),
}

_SUPERSEDE: dict[str, tuple[type[TruthkeeperError], str]] = {
    "other_slot": (CrossSlotSupersession,
                   "fact {f!r} cannot supersede {g!r}: supersedes links stay within one slot "
                   "of one layer (same subject and attribute, same scope: a scope's fact "
                   "does not supersede a shared one; it dominates it under the policy)"),
    "higher_tier": (TierInversion,
                    "fact {f!r} cannot supersede {g!r}: a lower tier never supersedes a "
                    "higher one"),
    "cycle": (SupersessionCycle,
              "fact {f!r} superseding {g!r} would close a cycle of supersedes links"),
}


def to_exception(err: list[Any], goal: str) -> TruthkeeperError:
    """The error-family exception for a caught Prolog error (data from ``tk_error/3``)."""
    name, args, context = err
    first = args[0] if args and isinstance(args[0], str) else None
    if name == "permission_error" and first == "supersede" and len(args) == 3 \
            and args[1] in _SUPERSEDE and isinstance(args[2], tuple):
        cls, template = _SUPERSEDE[args[1]]
        return cls(template.format(f=args[2][0], g=args[2][1]))
    second = args[1] if len(args) > 1 and isinstance(args[1], str) else None
    entry = (ERRORS.get((name, first, second)) or ERRORS.get((name, first))
             or ERRORS.get((name, None)))
    if entry is None:
        msg = f"Prolog error in {goal.split('(')[0]}: {name}{tuple(args)} {context}".strip()
        return PrologBridgeError(msg, (name, args, context))
    cls, template = entry
    fields = {f"a{i}": a for i, a in enumerate(args)}
    fields.update({f"a{i}": "" for i in range(len(args), 4)})
    msg = template.format(**fields)
    return cls(f"{msg}: {context}" if context else msg)


_WRAPPED: dict[str, str] = {}


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
    TruthkeeperError
        The mapped error when the goal raises an ISO error term (:data:`ERRORS`);
        PrologBridgeError when it fails or raises anything else.
    """
    load()
    _check_text(inputs.items())
    wrapped = _WRAPPED.get(goal)
    if wrapped is None:
        wrapped = _WRAPPED[goal] = (f"_G = ({goal}), catch(_G, _E, true), "
                                    "truthkeeper:tk_error(_E, _G, TkErr)")
    with _lock:
        try:
            result: dict[str, Any] = _janus.query_once(wrapped, dict(inputs))
        except _janus.PrologError as exc:
            msg = f"Prolog error in {goal.split('(')[0]}: {exc}"
            raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
    if not result.get("truth", False):
        msg = f"Prolog goal {goal.split('(')[0]} failed unexpectedly"
        raise PrologBridgeError(msg)
    err = result.pop("TkErr")
    if err != "ok":
        raise to_exception(err, goal)
    return result


def call(name: str, *args: Any) -> Any:
    """:func:`ask` for the goals run on every read and write, by their name in
    ``prolog/fast.pl``'s table (``resolve_rows``, ``add``, ``phi_store``, ...): one janus
    ``apply_once`` with the arguments in the table's order, no goal text to parse and no
    dict of bindings (about 4 us less a call). Returns the list of the goal's results
    (the table's order); raises as :func:`ask` does."""
    load()
    _check_text((name, x) for x in args)
    with _lock:
        try:
            initial = getattr(_thread, "initial", None)
            if initial is None:  # Prolog's initial thread: the one that imported janus
                initial = _thread.initial = _janus.query_once("thread_self(main)")["truth"]
            if initial:
                out = _janus.apply_once("fast", "tk_fast", name, list(args))
            else:  # janus 1.5's apply_once crashes the process in any other thread
                out = _janus.query_once("fast:tk_fast(N, As, Out)",
                                        {"N": name, "As": list(args)})["Out"]
        except _janus.PrologError as exc:
            msg = f"Prolog error in {name}: {exc}"
            raise PrologBridgeError(msg, getattr(exc, "term", None)) from exc
    if out[0] == "ok":
        return out[1:]
    if out[0] == "failed":
        msg = f"Prolog goal {name} failed unexpectedly"
        raise PrologBridgeError(msg)
    raise to_exception(out[1], name)


def _check_text(inputs: Iterable[tuple[str, Any]]) -> None:
    """Refuse text janus cannot pass: a lone surrogate fails the call, and the next one."""
    for name, v in inputs:
        for x in (v if isinstance(v, list) else (v,)):
            if type(x) is str and not x.isascii():
                try:
                    x.encode("utf-8")
                except UnicodeEncodeError:
                    msg = f"{name}: the text holds a lone surrogate; pass valid Unicode text"
                    raise InvalidFact(msg) from None


def run_plunit() -> tuple[int, int]:
    """Run every plunit suite shipped with the package; returns (passed, failed). The
    suites load the modules from source: in a process that loaded them from the quick-load
    file they run in a child process that does not."""
    load()
    if loaded_from == "qlf":
        import sys

        code = ("from truthkeeper.logic.bridge import run_plunit; "
                "print('\\ntk-plunit', *run_plunit())")
        env = {**os.environ, modcache.CACHE_ENV: ""}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=False)
        lines = out.stdout.splitlines()
        sys.stdout.write("\n".join(lines[:-1]) + "\n")
        sys.stderr.write(out.stderr)
        if out.returncode != 0 or not lines or not lines[-1].startswith("tk-plunit "):
            msg = f"the plunit suites could not be run: {out.stderr[-2000:]}"
            raise PrologBridgeError(msg)
        passed, failed = lines[-1].split()[1:]
        return int(passed), int(failed)
    with importlib.resources.as_file(
            importlib.resources.files("truthkeeper") / "prolog") as path:
        r = ask("tk_run_tests(Dir, Passed, Failed)", {"Dir": str(path)})
    return int(r["Passed"]), int(r["Failed"])
