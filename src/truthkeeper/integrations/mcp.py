"""An MCP server: the memory as tools an agent calls (``truthkeeper serve``).

Tools: remember, recall, about, slots, history, filter_context, why, decide,
resolve_context, feedback, end, forget (and declare, when the server is started with
``allow_declare``: declarations are the owner's, so an agent cannot turn ``employer`` into a
set to defeat supersession). Every tool takes an optional ``scope`` (``user:ana``) unless
the server is bound to one. Values follow the attributes' declared types; dates may be ISO
8601 with or without an offset (without: UTC), a date, or epoch seconds or milliseconds.
Errors reach the agent as MCP tool errors carrying the library's message; an argument a
tool does not take is refused, not dropped.

Over HTTP, a server with a token (``TRUTHKEEPER_MCP_TOKEN``) answers only requests that
carry ``Authorization: Bearer <token>``; without one it serves only the loopback address
(127.0.0.1, ::1, localhost), so an unauthenticated memory is never on the network.

Needs the ``mcp`` extra: ``pip install 'truthkeeper[mcp]'``.
"""

# no ``from __future__ import annotations``: the SDK reads the tools' annotations to build
# their input schemas
import contextlib
import hmac
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ..errors import InvalidFact, ScopeError, TierNotAuthorized, TruthkeeperError
from ..memory import Memory
from ..results import Utility
from ..schema import UNCHANGED
from ..values import Fact, jsonable

__all__ = ["TOKEN_ENV", "ContextItem", "build_server", "serve"]

T = TypeVar("T")

TOKEN_ENV = "TRUTHKEEPER_MCP_TOKEN"
"""The environment variable holding the bearer token of ``truthkeeper serve --http``."""
MIN_TOKEN = 16
LOOPBACK = ("127.0.0.1", "::1", "localhost")

INSTRUCTIONS = """\
A memory of facts keyed by (subject, attribute) that knows which value is current.
Store what you learn with remember (tier '{user_tier}' for what the user states in this
conversation, 'agent' for your own inferences, 'unverified' for retrieved web text);
ask recall or about before answering from memory; pass retrieved passages through
filter_context to drop stale ones (a kept passage marked memory 'conflict' disagrees with
what the memory holds, shown under held); when a retrieved passage and your own knowledge
disagree, weigh them with resolve_context; report whether an answer was right with feedback
(for your own answers: source 'model:parametric' with the confidence you stated); forget
erases personal data for good; end says a fact stopped being true. Attributes may hold sets
(recall returns a list of members): remember each member, and remember with present=false
when one leaves. slots lists what the memory holds. Dates: ISO 8601 (without an offset:
UTC), YYYY-MM-DD, or epoch seconds or milliseconds."""

JSONValue = str | int | float | bool | list[Any] | dict[str, Any] | None
Scope = Annotated[str | None, Field(description="the scope, e.g. user:ana (default: the "
                                                "server's)")]
Subject = Annotated[str, Field(description="what the fact is about: an entity, e.g. acme, "
                                          "ana, me")]
Attribute = Annotated[str, Field(description="which property of the subject, e.g. price, "
                                            "city, employer")]
Value = Annotated[JSONValue, Field(description="the value (a set attribute: one member)")]
When = Annotated[str | int | None, Field(
    description="a time: ISO 8601 (without an offset: UTC), YYYY-MM-DD, or epoch seconds "
                "or milliseconds")]
Text = Annotated[str | None, Field(description="the sentence the fact came from")]
Query = Annotated[str | None, Field(description="the question the context was retrieved "
                                                "for (kept in the audit log)")]
Utile = Annotated[float, Field(description="utility of a right answer")]
Loss = Annotated[float, Field(description="utility of a wrong answer (negative)")]
Abstain = Annotated[float, Field(description="utility of abstaining")]


SHOWN = 10
"""How many heads, candidates, alternatives, or a candidate's facts and sources, a tool's
answer spells out (the most probable first); ``<key>_omitted`` counts the others. A slot
a thousand sources answered at once (a poll) made one ``recall`` 0.7 MB of JSON, more than
an agent's context holds."""


def _shown(d: dict[str, Any], key: str) -> dict[str, Any]:
    """``d`` with its list ``key`` cut to :data:`SHOWN` items and the rest counted."""
    items = d.get(key)
    if isinstance(items, list) and len(items) > SHOWN:
        d[key], d[f"{key}_omitted"] = items[:SHOWN], len(items) - SHOWN
    return d


PAGE = 50
"""How many slots, or a slot's facts, ``slots`` and ``history`` return at a time (at most
:data:`MAX_PAGE`): a slot a thousand sources answered holds a thousand facts."""
MAX_PAGE = 500
Offset = Annotated[int, Field(ge=0, description="how many to skip (a page's next_offset)")]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description="how many to return at most")]


def _page(key: str, items: Sequence[T], offset: int, limit: int,
          show: Callable[[T], Any]) -> dict[str, Any]:
    """One page of a listing, ``items[offset:offset + limit]`` each shown, with how many
    there are and where the next page starts (None: this is the last)."""
    end = min(len(items), offset + limit)
    return {key: [show(x) for x in items[offset:end]], "total": len(items), "offset": offset,
            "next_offset": end if end < len(items) else None}


def _members(d: dict[str, Any], members: Any, key: str = "value", offset: int = 0,
             limit: int = PAGE) -> dict[str, Any]:
    """``d`` with ``d[key]`` the page of a set's ``members`` from ``offset`` (at most
    ``limit``), and ``<key>_omitted``: how many members it leaves out; a value that is no
    set (not a tuple: a list value is a list) is left as it is. A team of 2,000 members
    made one ``recall`` 94 KB of JSON."""
    if isinstance(members, tuple):
        page = members[offset:offset + limit]
        d[key] = jsonable(page)
        if len(page) < len(members):
            d[f"{key}_omitted"] = len(members) - len(page)
    return d


def _candidates(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A resolution's candidates, the most probable first, each with its first facts and
    sources (see :data:`SHOWN`)."""
    ranked = sorted(cands, key=lambda c: -(c["p"] if c.get("p") is not None else -1.0))
    return [_shown(_shown(c, "fact_ids"), "sources") for c in ranked]


def _memory_says(reason: dict[str, Any]) -> dict[str, Any]:
    """What a kept item's entry says of the memory's facts on its slot (nothing: current)."""
    if reason["status"] == "unknown":
        return {"memory": "unknown"}
    if reason["status"] == "conflict":
        more = reason.get("memory_omitted")
        return {"memory": "conflict", "held": reason["memory"],
                **({"held_omitted": more} if more else {})}
    return {}


def _time(value: str | int | None, name: str) -> Any:
    from ..schema import boundary_time

    return None if value in (None, "") else boundary_time(value, name)


class ContextItem(BaseModel):
    """A retrieved item for filter_context: a fact id, or a candidate with its slot."""

    fact_id: str | None = Field(None, description="a fact id of this memory")
    subject: str | None = Field(None, description="what the item is about")
    attribute: str | None = Field(None, description="which property of the subject")
    value: JSONValue = Field(None, description="the value the item states (without one the "
                                               "item is not judged)")
    valid_from: str | int | None = Field(None, description="when the item's claim became "
                                                           "true (ISO 8601, date, epoch)")
    valid_to: str | int | None = Field(None, description="when it stopped being true")
    present: bool = Field(True, description="false: the item says the value is no longer "
                                            "a member of a set attribute")
    tier: str = Field("unverified", description="the provenance class of its source (not "
                                                "a protected tier: an item carries no signature)")
    source: str | None = Field(None, description="who said it, e.g. web:example.org")
    text: str | None = Field(None, description="the retrieved passage")


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except TruthkeeperError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from None


def _refuse_unknown_arguments(server: Any, name: str) -> None:
    """Make a registered tool refuse arguments it does not declare: the SDK's argument
    model ignores them, so a misspelt ``scope`` would write into the server's own scope
    and an ``as_of`` given to ``recall`` would answer the current value, both silently.
    The tool's input schema then says ``additionalProperties: false``."""
    from pydantic import ConfigDict

    found = server._tool_manager.get_tool(name)  # the SDK has no public hook for this
    base = found.fn_metadata.arg_model

    strict = type(base)(base.__name__, (base,), {  # named as the SDK named it, for errors
        "__module__": base.__module__, "__qualname__": base.__qualname__,
        "model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid")})
    found.fn_metadata.arg_model = strict
    found.parameters = strict.model_json_schema(by_alias=True)


class _StaticToken:
    """A token verifier for one shared secret (compared in constant time)."""

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode(), self._secret):
            return AccessToken(token=token, client_id="truthkeeper", scopes=[])
        return None


def build_server(mem: Memory, *, scope: str | None = None, name: str = "truthkeeper",
                 token: str | None = None, url: str | None = None,
                 allow_declare: bool = False) -> Any:
    """An ``MCPServer`` over ``mem`` (bound to ``scope`` when given). With ``token`` its HTTP
    transport answers only requests bearing it; ``url`` is the server's base URL;
    ``allow_declare`` adds the declare tool (declarations are the owner's otherwise)."""
    from mcp.server.mcpserver import MCPServer

    auth: dict[str, Any] = {}
    if token is not None:
        from mcp.server.auth.settings import AuthSettings
        from pydantic import AnyHttpUrl

        base = url or "http://127.0.0.1"
        auth = {"token_verifier": _StaticToken(token),
                "auth": AuthSettings(issuer_url=AnyHttpUrl(base),
                                     resource_server_url=AnyHttpUrl(f"{base}/mcp"),
                                     validate_token_resource=False)}
    open_tiers = [t for t in mem.tiers if t not in mem.protected_tiers]
    user_tier = open_tiers[0] if open_tiers else "none: every tier needs a signature"
    server = MCPServer(name, instructions=INSTRUCTIONS.format(user_tier=user_tier), **auth)

    def view(s: str | None) -> Memory:
        if scope is not None and s not in (None, scope):
            raise ScopeError(f"this server is bound to scope {scope!r}")
        chosen = s if s is not None else scope
        return mem if chosen is None else mem.scope(chosen)

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        registered = server.tool()(fn)
        _refuse_unknown_arguments(server, fn.__name__)
        return registered

    @tool
    def remember(
        subject: Subject, attribute: Attribute, value: Value,
        source: Annotated[str, Field(description="who said it, e.g. user:ana, web:example.org")],
        tier: Annotated[str, Field(description=f"one of {', '.join(open_tiers)}: '{user_tier}' "
                                   "for the user's own statements in this conversation")]
        = "agent",
        valid_from: Annotated[str | int | None, Field(
            description="when it became true (default now): ISO 8601, date or epoch")] = None,
        valid_to: Annotated[str | int | None, Field(
            description="when it stops (stopped) being true, if known")] = None,
        supersedes: Annotated[str | None, Field(description="the fact id it corrects")] = None,
        present: Annotated[bool, Field(
            description="false: value is no longer a member of this set attribute")] = True,
        text: Text = None, scope: Scope = None,
    ) -> dict[str, Any]:
        """Store a fact about subject.attribute; returns it with its id."""
        with _errors():
            if tier in mem.protected_tiers:
                raise TierNotAuthorized(
                    f"tier {tier!r} needs the owner's signature, which this server cannot "
                    f"carry; store the user's statements as {user_tier!r}")
            f = view(scope).add(subject, attribute, value, source=source, tier=tier,
                                valid_from=_time(valid_from, "valid_from"),
                                valid_to=_time(valid_to, "valid_to"), supersedes=supersedes,
                                text=text, present=present)
            return f.to_dict()

    @tool
    def end(fact_id: Annotated[str, Field(description="the fact that stopped being true")],
            valid_to: Annotated[str | int | None, Field(
                description="when it stopped (default now)")] = None,
            scope: Scope = None) -> dict[str, Any]:
        """Say that a fact stopped being true (e.g. the user left that job); its history
        stays, and it is no longer current once valid_to has passed."""
        with _errors():
            v = view(scope)
            v.end(fact_id, valid_to=_time(valid_to, "valid_to"))
            return v.get(fact_id).to_dict()

    @tool
    def slots(subject: Annotated[str | None, Field(
                  description="only this subject's attributes")] = None,
              prefix: Annotated[str | None, Field(
                  description="only subjects starting with this text")] = None,
              offset: Offset = 0, limit: Limit = PAGE, scope: Scope = None) -> dict[str, Any]:
        """Which subjects and attributes the memory holds facts about, sorted, a page at a
        time: ``total`` counts them all, ``next_offset`` (null at the end) asks for more."""
        with _errors():
            found = view(scope).slots(subject, prefix=prefix)
            return _page("slots", found, offset, limit,
                         lambda x: {"subject": x[0], "attribute": x[1]})

    if allow_declare:
        @tool
        def declare(attribute: Attribute,
                    cardinality: Annotated[Literal["one", "many"] | None, Field(
                        description="many: the attribute holds a set of values; "
                                    "omitted: as it is")] = None,
                    value_type: Annotated[
                        Literal["number", "string", "boolean", "date", "none"] | None,
                        Field(description="coerce values to this type; none: no type; "
                                          "omitted: as it is")] = None) -> dict[str, Any]:
            """Declare an attribute for the whole memory (the owner allowed it): what is
            omitted stays as it is."""
            with _errors():
                mem.declare(attribute, cardinality=cardinality or UNCHANGED,
                            value_type={None: UNCHANGED, "none": None}.get(value_type,
                                                                          value_type))
                return mem.declarations()[attribute.strip().casefold()].to_dict()

    @tool
    def recall(subject: Subject, attribute: Attribute, scope: Scope = None,
               offset: Annotated[int, Field(ge=0, description="a set's first member to "
                                            "show (a page's next_offset)")] = 0,
               limit: Limit = PAGE) -> dict[str, Any]:
        """The current value of subject.attribute: resolved, conflict (the candidates with
        their probabilities, most probable first) or unknown, with the justification. Lists
        name at most ten items and count the rest (``candidates_omitted``, ...); a set's
        members come a page at a time (``value_omitted`` counts the others, ``next_offset``
        asks for more)."""
        with _errors():
            r = view(scope).current(subject, attribute)
            out: dict[str, Any] = r.to_dict()
            out["candidates"] = _candidates(out["candidates"])
            out["why"] = str(r.why()) if r.heads else ""
            if isinstance(r.value, tuple):
                _members(out, r.value, offset=offset, limit=limit)
                end = offset + limit
                out["next_offset"] = end if end < len(r.value) else None
            _members(out, r.best, "best", limit=SHOWN)
            return _shown(_shown(out, "heads"), "candidates")

    @tool
    def about(subject: Subject, scope: Scope = None, offset: Offset = 0,
              limit: Limit = PAGE) -> dict[str, Any]:
        """The current slots of a subject, a page of attributes at a time (sorted; ``total``
        counts them, ``next_offset`` asks for more): attribute -> status, value (a set's
        first ten members, ``value_omitted`` counting the others), candidates."""
        with _errors():
            v = view(scope)
            page = _page("attributes", v.slots(subject), offset, limit,  # sorted
                         lambda sa: (sa[1], v.current(*sa)))  # only the page's slots read
            page["attributes"] = {a: _members(_shown({
                "status": r.status, "value": jsonable(r.value), "candidates": _candidates(
                    [{"value": c.value, "p": c.p, "sources": list(c.sources)}
                     for c in r.candidates])}, "candidates"), r.value, limit=SHOWN)
                for a, r in page["attributes"]}
            return page

    @tool
    def history(subject: Subject, attribute: Attribute, offset: Annotated[
                    int | None, Field(ge=0, description="the first fact to show, 0: the "
                                      "oldest; omitted: the newest page")] = None,
                limit: Limit = PAGE, scope: Scope = None) -> dict[str, Any]:
        """The facts of subject.attribute, oldest first, with their status, a page at a
        time (by default the newest): ``total`` counts them all, ``offset`` is the first
        one shown, ``next_offset`` (null at the end) asks for the next page."""
        with _errors():
            facts = view(scope).history(subject, attribute)
            first = max(0, len(facts) - limit) if offset is None else offset
            return _page("facts", facts, first, limit, Fact.to_dict)

    @tool
    def filter_context(
        items: Annotated[list[ContextItem], Field(description="the retrieved items, in order")],
        query: Query = None, scope: Scope = None,
    ) -> dict[str, Any]:
        """Drop the stale items of a retrieved context; each drop names what dominates it.
        Items the memory cannot judge (no slot, no value, unusable dates) are kept
        untouched, with the reason; a kept item about a slot of which the memory holds no
        fact says ``"memory": "unknown"``, and one that disagrees with a fact the memory
        holds, neither making the other obsolete (a newer claim of a lower tier, say),
        says ``"memory": "conflict"`` with those facts under ``"held"`` (at most five, the
        highest tier first; ``"held_omitted"`` counts the others)."""
        from .documents import judge_documents

        with _errors():
            report = judge_documents(view(scope),
                                     [it.model_dump(exclude_unset=True) for it in items],
                                     [it.text or "" for it in items], query)
            why = dict(report.why_unjudged)
            kept = [{"index": i, "judged": i not in why,
                     **({"reason": why[i]} if i in why else {}),
                     **_memory_says(report.reason(i))}
                    for i in range(len(items)) if i in report.kept or i in why]
            dropped = [{"index": i, "rule": rule, "dominated_by": jsonable(by)}
                       for i, rule, by in report.dropped]
            return {"kept": kept, "dropped": dropped}

    @tool
    def why(item: Annotated[str, Field(description="a fact id or a belief such as "
                                       "needs_vpn(ana)")], scope: Scope = None) -> str:
        """Why a fact holds (or was superseded), or why a belief is derived."""
        with _errors():
            return str(view(scope).why(item))

    @tool
    def decide(subject: Subject, attribute: Attribute, correct: Utile = 1.0,
               wrong: Loss = -1.0, abstain: Abstain = 0.0, scope: Scope = None,
               ) -> dict[str, Any]:
        """Answer with the value of highest expected utility, or abstain."""
        with _errors():
            d = view(scope).decide(subject, attribute,
                                   utility=Utility(correct=correct, wrong=wrong, abstain=abstain))
            out = _members(d.to_dict(), d.value)  # a set: its first page of members
            for alt, a in zip(out["alternatives"], d.alternatives, strict=True):
                _members(alt, a.value)
            return _shown(out, "alternatives")  # best first

    @tool
    def resolve_context(
        question: Annotated[str, Field(description="the question being answered")],
        context_value: Annotated[JSONValue, Field(description="the retrieved passage's answer")],
        context_source: Annotated[str, Field(description="where the passage came from")],
        parametric_value: Annotated[JSONValue, Field(description="your own answer")],
        parametric_confidence: Annotated[float, Field(
            description="your confidence in parametric_value, from 0 to 1")],
        alternatives: Annotated[int | None, Field(
            description="how many answers the question has (2 for yes/no; a large number "
                        "for open-ended answers); omitted: as many as the memory learned")
        ] = None,
        context_tier: Annotated[str, Field(description=f"the passage source's tier, one of "
                                           f"{', '.join(open_tiers)}")]
        = "unverified", correct: Utile = 1.0, wrong: Loss = -1.0, abstain: Abstain = 0.0,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Weigh a retrieved passage's answer (context_value, from context_source) against
        your own (parametric_value): answer with the better one, or abstain. Report the
        outcome afterwards with feedback (source=context_source, and source=model:parametric
        with your confidence), so that the next decision learns from it."""
        with _errors():
            d = view(scope).resolve_context(
                question=question, context_value=context_value, context_source=context_source,
                parametric_value=parametric_value, parametric_confidence=parametric_confidence,
                context_tier=context_tier, alternatives=alternatives,
                utility=Utility(correct=correct, wrong=wrong, abstain=abstain))
            return d.to_dict()

    @tool
    def feedback(
        correct: Annotated[bool, Field(description="whether it was right")],
        fact_id: Annotated[str | None, Field(description="the fact the outcome is about")]
        = None,
        subject: Annotated[str | None, Field(description="with attribute and value: the "
                                             "true value of a slot")] = None,
        attribute: Annotated[str | None, Field(description="the slot's attribute")] = None,
        value: Annotated[JSONValue, Field(description="the slot's true value")] = None,
        source: Annotated[str | None, Field(description="a source with no fact here, e.g. "
                                            "model:parametric")] = None,
        confidence: Annotated[float | None, Field(
            description="with source: the confidence it stated (yours, for "
                        "model:parametric)")] = None,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Report an outcome: fact_id was right or wrong; or the true value of
        subject.attribute (every head is labelled); or a source was right or wrong."""
        with _errors():
            v = view(scope)
            if confidence is not None and source is None:
                raise InvalidFact("confidence goes with source")
            if fact_id is not None:
                v.record_outcome(fact_id, correct=correct)
                return {"recorded": 1}
            if subject is not None and attribute is not None:
                if not correct:
                    raise InvalidFact("give the true value with correct=true")
                return {"recorded": v.confirm(subject, attribute, value)}
            if source is not None:
                v.record_source_outcome(source, correct=correct, confidence=confidence)
                return {"recorded": 1}
            raise InvalidFact("give fact_id, subject and attribute (with the true value), "
                              "or source")

    @tool
    def forget(
        fact_id: Annotated[str | None, Field(description="the fact to forget")] = None,
        subject: Annotated[str | None, Field(description="everything about this subject")]
        = None,
        attribute: Annotated[str | None, Field(description="with subject: only this slot")]
        = None,
        mode: Annotated[Literal["erase", "retract"], Field(
            description="erase: remove the content for good (personal data); retract: mark "
                        "it wrong, keeping history")] = "erase",
        reason: Annotated[str, Field(description="why (kept in the journal)")]
        = "the user asked to forget", scope: Scope = None,
    ) -> dict[str, Any]:
        """Forget a fact, a slot or everything about a subject."""
        with _errors():
            v = view(scope)
            if mode == "retract":
                if fact_id is None:
                    raise InvalidFact("retract needs a fact_id")
                v.retract(fact_id, reason=reason)
                return {"retracted": [fact_id]}
            if fact_id is None and subject is None:
                raise InvalidFact("give fact_id or subject")
            return {"erased": v.erase([] if fact_id is None else [fact_id], subject=subject,
                                      attribute=attribute, reason=reason)}

    return server


def serve(db: str | None = None, http: str | None = None, scope: str | None = None,
          allow_declare: bool = False) -> None:
    """Run the server on stdio (default) or streamable HTTP at ``HOST:PORT`` (with the
    bearer token in ``TRUTHKEEPER_MCP_TOKEN``; without one, on a loopback address only)."""
    host, port, token = "", "", None
    if http is not None:  # checked before anything is opened
        host, _, port = http.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        if not port.isdigit():
            raise InvalidFact(f"--http wants HOST:PORT, got {http!r}")
        token = os.environ.get(TOKEN_ENV) or None
        if token is None and host not in LOOPBACK:
            raise InvalidFact(f"serving on {host} would put the memory on the network "
                              f"without authentication: set {TOKEN_ENV} to a secret of at "
                              f"least {MIN_TOKEN} characters, or serve on 127.0.0.1")
        if token is not None and len(token) < MIN_TOKEN:
            raise InvalidFact(f"{TOKEN_ENV} must be at least {MIN_TOKEN} characters")
    mem = Memory() if db is None else Memory.open(db, readonly=False, create=True)
    try:
        if http is None:
            from .mcp_stdio import run_stdio

            run_stdio(build_server(mem, scope=scope, allow_declare=allow_declare))
        else:
            where = f"[{host}]" if ":" in host else host
            server = build_server(mem, scope=scope, token=token,
                                  url=f"http://{where}:{port}", allow_declare=allow_declare)
            server.run("streamable-http", host=host, port=int(port))
    finally:
        mem.close()
