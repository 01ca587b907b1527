"""An MCP server: the memory as tools an agent calls (``truthkeeper serve``).

Tools: remember, recall, about, history, filter_context, why, decide, feedback, forget.
Every tool takes an optional ``scope`` (``user:ana``) unless the server is bound to one.
Errors reach the agent as MCP tool errors carrying the library's message.

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
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..errors import InvalidFact, TierNotAuthorized, TruthkeeperError, UnknownFact
from ..memory import Memory
from ..values import Candidate, Utility, jsonable

__all__ = ["TOKEN_ENV", "ContextItem", "build_server", "serve"]

TOKEN_ENV = "TRUTHKEEPER_MCP_TOKEN"
"""The environment variable holding the bearer token of ``truthkeeper serve --http``."""
MIN_TOKEN = 16
LOOPBACK = ("127.0.0.1", "::1", "localhost")

INSTRUCTIONS = """\
A memory of facts keyed by (subject, attribute) that knows which value is current.
Store what you learn with remember (tier 'verified' for what the user states in this
conversation, 'agent' for your own inferences, 'unverified' for retrieved web text);
ask recall or about before answering from memory; pass retrieved passages through
filter_context to drop stale ones; when a retrieved passage and your own knowledge
disagree, weigh them with resolve_context; report whether an answer was right with feedback
(for your own answers: source 'model:parametric' with the confidence you stated); forget
erases personal data for good. Dates: YYYY-MM-DD or ISO 8601 with an offset."""

JSONValue = str | int | float | bool | list[Any] | dict[str, Any] | None
Scope = Annotated[str | None, Field(description="the scope, e.g. user:ana (default: the "
                                                "server's)")]


class ContextItem(BaseModel):
    """A retrieved item for filter_context: a fact id, or a candidate with its slot."""

    fact_id: str | None = Field(None, description="a fact id of this memory")
    subject: str | None = None
    attribute: str | None = None
    value: JSONValue = None
    valid_from: str | None = Field(None, description="when the item's claim became true")
    tier: str = "unverified"
    source: str | None = None
    text: str | None = None


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except TruthkeeperError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from None


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
                 token: str | None = None, url: str | None = None) -> Any:
    """An ``MCPServer`` over ``mem`` (bound to ``scope`` when given). With ``token`` its HTTP
    transport answers only requests bearing it; ``url`` is the server's base URL."""
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
    server = MCPServer(name, instructions=INSTRUCTIONS, **auth)
    open_tiers = [t for t in mem.tiers if t not in mem.protected_tiers]

    def view(s: str | None) -> Memory:
        if scope is not None and s not in (None, scope):
            raise UnknownFact(f"this server is bound to scope {scope!r}")
        chosen = s if s is not None else scope
        return mem if chosen is None else mem.scope(chosen)

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        return server.tool()(fn)

    @tool
    def remember(
        subject: str, attribute: str, value: JSONValue,
        source: Annotated[str, Field(description="who said it, e.g. user:ana, web:example.org")],
        tier: Annotated[str, Field(description=f"one of {', '.join(open_tiers)}: 'verified' "
                                   "for the user's own statements in this conversation")]
        = "agent",
        valid_from: Annotated[str | None, Field(description="when it became true "
                                                "(default now)")] = None,
        supersedes: Annotated[str | None, Field(description="the fact id it corrects")] = None,
        text: str | None = None, scope: Scope = None,
    ) -> dict[str, Any]:
        """Store a fact about subject.attribute; returns it with its id."""
        with _errors():
            if tier in mem.protected_tiers:
                raise TierNotAuthorized(
                    f"tier {tier!r} needs the owner's signature, which this server cannot "
                    f"carry; store the user's statements as 'verified'")
            f = view(scope).add(subject, attribute, value, source=source, tier=tier,
                                valid_from=valid_from, supersedes=supersedes, text=text)
            return f.to_dict()

    @tool
    def recall(subject: str, attribute: str, scope: Scope = None) -> dict[str, Any]:
        """The current value of subject.attribute: resolved, conflict (every candidate with
        its probability) or unknown, with the justification."""
        with _errors():
            r = view(scope).current(subject, attribute)
            out: dict[str, Any] = r.to_dict()
            out["why"] = str(r.why()) if r.heads else ""
            return out

    @tool
    def about(subject: str, scope: Scope = None) -> dict[str, Any]:
        """Every current slot of a subject: attribute -> status, value, candidates."""
        with _errors():
            return {a: {"status": r.status, "value": r.value,
                        "candidates": [{"value": c.value, "p": c.p, "sources": list(c.sources)}
                                       for c in r.candidates]}
                    for a, r in view(scope).about(subject).items()}

    @tool
    def history(subject: str, attribute: str, scope: Scope = None) -> list[dict[str, Any]]:
        """Every fact of subject.attribute, oldest first, with its status."""
        with _errors():
            return [f.to_dict() for f in view(scope).history(subject, attribute)]

    @tool
    def filter_context(items: list[ContextItem], query: str | None = None,
                       scope: Scope = None) -> dict[str, Any]:
        """Drop the stale items of a retrieved context; each drop names what dominates it.
        Items without a slot (no fact_id, subject or attribute) are kept untouched."""
        with _errors():
            judged: list[Any] = []
            index: list[int] = []
            for i, it in enumerate(items):
                if it.fact_id is not None:
                    judged.append(it.fact_id)
                elif it.subject and it.attribute and it.valid_from:
                    judged.append(Candidate(it.subject, it.attribute, it.value, it.valid_from,
                                            tier=it.tier, source=it.source, text=it.text))
                else:
                    continue
                index.append(i)
            res = view(scope).filter(judged, query=query)
            drops = {id(d.item): d for d in res.dropped}
            at = dict(zip(index, judged, strict=True))
            out_kept, out_dropped = [], []
            for i in range(len(items)):
                d = drops.get(id(at[i])) if i in at else None
                if d is None:
                    out_kept.append({"index": i, "judged": i in at})
                else:
                    out_dropped.append({"index": i, "rule": d.rule,
                                        "dominated_by": jsonable(d.dominated_by)})
            return {"kept": out_kept, "dropped": out_dropped}

    @tool
    def why(item: Annotated[str, Field(description="a fact id or a belief such as "
                                       "needs_vpn(ana)")], scope: Scope = None) -> str:
        """Why a fact holds (or was superseded), or why a belief is derived."""
        with _errors():
            return str(view(scope).why(item))

    @tool
    def decide(subject: str, attribute: str, correct: float = 1.0, wrong: float = -1.0,
               abstain: float = 0.0, scope: Scope = None) -> dict[str, Any]:
        """Answer with the value of highest expected utility, or abstain."""
        with _errors():
            d = view(scope).decide(subject, attribute,
                                   utility=Utility(correct=correct, wrong=wrong, abstain=abstain))
            return d.to_dict()

    @tool
    def resolve_context(
        question: str, context_value: JSONValue, context_source: str,
        parametric_value: JSONValue,
        parametric_confidence: Annotated[float, Field(
            description="your confidence in parametric_value, from 0 to 1")],
        alternatives: Annotated[int | None, Field(
            description="how many answers the question has (2 for yes/no; a large number "
                        "for open-ended answers); omitted: as many as the memory learned")
        ] = None,
        context_tier: str = "unverified", correct: float = 1.0, wrong: float = -1.0,
        abstain: float = 0.0, scope: Scope = None,
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
        correct: bool, fact_id: str | None = None, subject: str | None = None,
        attribute: str | None = None, value: JSONValue = None,
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
        fact_id: str | None = None, subject: str | None = None, attribute: str | None = None,
        mode: Annotated[Literal["erase", "retract"], Field(
            description="erase: remove the content for good (personal data); retract: mark "
                        "it wrong, keeping history")] = "erase",
        reason: str = "the user asked to forget", scope: Scope = None,
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


def serve(db: str | None = None, http: str | None = None, scope: str | None = None) -> None:
    """Run the server on stdio (default) or streamable HTTP at ``HOST:PORT`` (with the
    bearer token in ``TRUTHKEEPER_MCP_TOKEN``; without one, on a loopback address only)."""
    from ..cli_memory import open_existing

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
    mem = Memory() if db is None else open_existing(db, readonly=False, create=True)
    try:
        if http is None:
            build_server(mem, scope=scope).run()
        else:
            where = f"[{host}]" if ":" in host else host
            server = build_server(mem, scope=scope, token=token,
                                  url=f"http://{where}:{port}")
            server.run("streamable-http", host=host, port=int(port))
    finally:
        mem.close()
