"""Agent integration: the MCP server over stdio (a real subprocess and the SDK's client),
the LangChain and LlamaIndex adapters with the real classes, and the memory-file CLI."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from truthkeeper import Candidate, Fact, Memory
from truthkeeper.cli import main
from truthkeeper.integrations.langchain import TruthkeeperCompressor, TruthkeeperRetriever
from truthkeeper.integrations.llamaindex import TruthkeeperPostprocessor
from truthkeeper.testing import hostile_values

# ---------------------------------------------------------------- MCP


async def _session(db: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "truthkeeper", "serve", "--db", str(db)])
    out: list[Any] = []
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        out.append(sorted(t.name for t in (await s.list_tools()).tools))
        for name, args in calls:
            res = await s.call_tool(name, args)
            if res.is_error:
                out.append((True, res.content[0].text))
                continue
            data = res.structured_content
            if isinstance(data, dict) and set(data) == {"result"}:
                data = data["result"]  # a list or a string, wrapped by the SDK
            out.append((False, data))
    return out


def test_mcp_server_every_tool_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    ana = {"scope": "user:ana"}
    calls = [
        ("remember", {"subject": "me", "attribute": "city", "value": "Lisbon",
                      "source": "user:ana", "tier": "verified", "valid_from": "2026-01-01",
                      **ana}),
        ("remember", {"subject": "me", "attribute": "city", "value": "Porto",
                      "source": "user:ana", "tier": "verified", "valid_from": "2026-06-01",
                      **ana}),
        ("remember", {"subject": "me", "attribute": "pet", "value": "cat", "source": "guess",
                      "valid_from": "2026-01-01", **ana}),
        ("remember", {"subject": "me", "attribute": "pet", "value": "dog", "source": "web",
                      "tier": "agent", "valid_from": "2026-01-01", **ana}),
        ("remember", {"subject": "me", "attribute": "x", "value": 1, "source": "user:ana",
                      "tier": "human", **ana}),  # protected: a tool error, nothing stored
        ("remember", {"subject": "me", "attribute": "x", "value": 1, "source": "s",
                      "valid_from": "2026-13-01", **ana}),  # a bad date: a tool error
        ("recall", {"subject": "me", "attribute": "city", **ana}),
        ("recall", {"subject": "me", "attribute": "city"}),  # another scope: unknown
        ("about", {"subject": "me", **ana}),
        ("history", {"subject": "me", "attribute": "city", **ana}),
        ("filter_context", {"items": [
            {"subject": "me", "attribute": "city", "value": "Lisbon",
             "valid_from": "2026-01-01", "text": "Ana lives in Lisbon"},
            {"text": "no slot: kept untouched"}], "query": "where does ana live", **ana}),
        ("decide", {"subject": "me", "attribute": "pet", "wrong": -4, **ana}),
        ("feedback", {"subject": "me", "attribute": "pet", "value": "dog", "correct": True,
                      **ana}),
        ("feedback", {"source": "model:parametric", "correct": False, **ana}),
        ("forget", {"subject": "me", "attribute": "city", **ana}),
        ("recall", {"subject": "me", "attribute": "city", **ana}),
        ("resolve_context", {"question": "capital?", "context_value": "Lyon",
                             "context_source": "web", "parametric_value": "Paris",
                             "parametric_confidence": 0.9, **ana}),
        ("resolve_context", {"question": "capital?", "context_value": "Lyon",
                             "context_source": "web", "parametric_value": "Paris",
                             "parametric_confidence": 0.9, "alternatives": 1, **ana}),
        ("feedback", {"source": "model:parametric", "correct": True, "confidence": 0.9,
                      **ana}),
        ("feedback", {"fact_id": "nope", "correct": True, "confidence": 0.9, **ana}),
    ]
    out = asyncio.run(_session(db, calls))
    assert out[0] == sorted(["remember", "recall", "about", "history", "filter_context", "why",
                             "decide", "feedback", "forget", "resolve_context", "end",
                             "slots"])  # no declare: the owner did not allow it
    rem = out[1:5]
    assert all(not err for err, _ in rem) and rem[0][1]["scope"] == "user:ana"
    assert out[5][0] and "signature" in out[5][1] and "verified" in out[5][1]
    assert out[6][0] and "valid_from" in out[6][1]
    err, city = out[7]
    assert not err and city["status"] == "resolved" and city["value"] == "Porto"
    assert "Porto" in city["why"]
    assert out[8][1]["status"] == "unknown"
    about = out[9][1]
    assert set(about["attributes"]) == {"city", "pet"} and (about["total"], about["offset"],
                                                            about["next_offset"]) == (2, 0, None)
    assert about["attributes"]["pet"]["status"] == "conflict"
    assert [f["value"] for f in out[10][1]["facts"]] == ["Lisbon", "Porto"]
    assert (out[10][1]["total"], out[10][1]["next_offset"]) == (2, None)
    filt = out[11][1]
    assert [d["index"] for d in filt["dropped"]] == [0]
    assert filt["dropped"][0]["dominated_by"]["value"] == "Porto"  # the memory's fact
    assert filt["kept"] == [{"index": 1, "judged": False,
                             "reason": "no subject and attribute in its metadata"}]
    assert out[12][1]["action"] == "abstain"
    assert out[13][1] == {"recorded": 2} and out[14][1] == {"recorded": 1}
    assert len(out[15][1]["erased"]) == 2
    assert out[16][1]["status"] == "unknown"
    ctx = out[17][1]  # the model's 0.9 against an unknown web source: the model's answer
    assert ctx["value"] == "Paris" and ctx["action"] == "answer"
    assert {a["value"] for a in ctx["alternatives"]} == {"Lyon", "Paris"}
    assert out[18][0] and "alternatives" in out[18][1]
    assert out[19][1] == {"recorded": 1}
    assert out[20][0] and "confidence goes with source" in out[20][1]
    # why, on a fact id the server returned
    fid = rem[2][1]["id"]
    [_, (err, text)] = asyncio.run(_session(db, [("why", {"item": fid, **ana})]))
    assert not err and "guess" in text
    with Memory(db) as mem:  # everything the agent did is in the journal
        view = mem.scope("user:ana")
        assert [f.status for f in view.history("me", "city")] == ["erased", "erased"]
        # feedback given in ana's scope teaches her view, not the shared layer
        assert {r.source: r.n for r in view.reliability()}["model:parametric"] == 2
        assert "model:parametric" not in {r.source for r in mem.reliability()}
        assert mem._rel.book_for("user:ana").stated["model:parametric"] == [(0.9, True)]
        assert mem.verify().ok


def _call(server: Any, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        res = asyncio.run(server.call_tool(name, args))
    except ToolError as exc:  # in process, a tool error is raised (over a transport: is_error)
        return True, str(exc)
    if res.is_error:
        return True, res.content[0].text
    data = res.structured_content
    return False, data["result"] if isinstance(data, dict) and set(data) == {"result"} else data


def test_mcp_tools_for_sets_ends_slots_and_declarations() -> None:
    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    agent, owner = build_server(mem), build_server(mem, allow_declare=True)
    tools = asyncio.run(agent.list_tools())
    assert "declare" not in {t.name for t in tools}
    for t in tools:  # every argument says what it is
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), (t.name, name)
    assert _call(owner, "declare", {"attribute": "pet", "cardinality": "many"})[1][
        "cardinality"] == "many"
    assert _call(owner, "declare", {"attribute": "price", "value_type": "number"})[0] is False
    for pet in ("cat", "dog"):
        _call(agent, "remember", {"subject": "ana", "attribute": "pet", "value": pet,
                                  "source": "user:ana", "tier": "verified",
                                  "valid_from": "2026-01-01T10:00:00"})  # naive: UTC
    err, cat_gone = _call(agent, "remember", {
        "subject": "ana", "attribute": "pet", "value": "cat", "source": "user:ana",
        "tier": "verified", "valid_from": 1770231626, "present": False})  # epoch seconds
    assert not err and cat_gone["present"] is False
    assert _call(agent, "recall", {"subject": "ana", "attribute": "pet"})[1]["value"] == ["dog"]
    err, pet = _call(owner, "declare", {"attribute": "pet", "value_type": "string"})
    assert not err and pet == {"attribute": "pet", "cardinality": "many",  # kept: a set
                               "value_type": "string"}
    assert _call(owner, "declare", {"attribute": "pet", "cardinality": "many"})[1][
        "value_type"] == "string"  # kept
    assert _call(owner, "declare", {"attribute": "pet", "value_type": "none"})[1][
        "value_type"] is None  # removed
    err, price = _call(agent, "remember", {"subject": "acme", "attribute": "price",
                                           "value": "135", "source": "tool",
                                           "valid_from": "2026-01-01"})
    assert not err and price["value"] == 135  # the declared type
    assert _call(agent, "remember", {"subject": "acme", "attribute": "price", "value": "a lot",
                                     "source": "tool"})[0] is True
    err, job = _call(agent, "remember", {"subject": "ana", "attribute": "employer",
                                         "value": "Globex", "source": "user:ana",
                                         "tier": "verified", "valid_from": "2026-01-01"})
    err, ended = _call(agent, "end", {"fact_id": job["id"], "valid_to": "2026-03-01"})
    assert not err and ended["valid_to"].startswith("2026-03-01")
    assert _call(agent, "recall", {"subject": "ana", "attribute": "employer"})[1][
        "status"] == "unknown"
    assert _call(agent, "slots", {"prefix": "an"})[1]["slots"] == [
        {"subject": "ana", "attribute": "employer"}, {"subject": "ana", "attribute": "pet"}]
    assert _call(agent, "slots", {"subject": "acme"})[1]["slots"] == [
        {"subject": "acme", "attribute": "price"}]
    assert _call(agent, "declare", {"attribute": "employer", "cardinality": "many"})[0]


def test_mcp_tools_refuse_arguments_they_do_not_take() -> None:
    """An argument a tool does not declare is refused, not dropped: a misspelt ``scope``
    would have written into the shared layer, and an ``as_of`` given to ``recall`` would
    have answered the current value, both silently. Nothing is stored; every tool's
    input schema says so (``additionalProperties: false``)."""
    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    server = build_server(mem)
    for t in asyncio.run(server.list_tools()):
        assert t.input_schema.get("additionalProperties") is False, t.name
    err, msg = _call(server, "remember", {"subject": "ana", "attribute": "city",
                                          "value": "Oslo", "source": "user:ana",
                                          "scop": "user:ana"})
    assert err and "scop" in msg and "not permitted" in msg
    assert len(mem) == 0 and len(mem.scope("user:ana")) == 0
    _call(server, "remember", {"subject": "ana", "attribute": "city", "value": "Oslo",
                               "source": "user:ana", "scope": "user:ana"})
    err, msg = _call(server, "recall", {"subject": "ana", "attribute": "city",
                                        "scope": "user:ana", "as_of": "2020-01-01"})
    assert err and "as_of" in msg
    assert _call(server, "recall", {"subject": "ana", "attribute": "city",
                                    "scope": "user:ana"})[1]["value"] == "Oslo"


# ---------------------------------------------------------------- LangChain, LlamaIndex


def _memory() -> tuple[Memory, Fact]:
    mem = Memory()
    f = mem.add("acme", "price", 135, source="billing", tier="verified",
                valid_from="2026-06-01")
    return mem, f


def _docs() -> list[Document]:
    return [Document("acme costs 100", metadata={"subject": "acme", "attribute": "price",
                                                  "value": 100, "valid_from": "2026-01-01"}),
            Document("no metadata at all"),
            Document("acme costs 150 (a web rumour)", metadata={
                "subject": "acme", "attribute": "price", "value": 150,
                "valid_from": "2026-07-01", "source": "web", "tier": "unverified"}),
            Document("bob lives in Oslo", metadata={"subject": "bob", "attribute": "city",
                                                     "valid_from": "2026-01-01"})]


def test_langchain_compressor_drops_stale_documents_against_the_memory() -> None:
    mem, f = _memory()
    comp = TruthkeeperCompressor(memory=mem)
    docs = _docs()
    out = comp.compress_documents(docs, "what does acme cost?")
    assert [d.page_content for d in out] == [docs[1].page_content, docs[2].page_content,
                                             docs[3].page_content]
    assert out[0] is docs[1] and out[2] is docs[3]  # untouched
    said = out[1].metadata["truthkeeper"]  # the newer rumour: kept, against a verified fact
    assert said["status"] == "conflict" and [m["fact_id"] for m in said["memory"]] == [f.id]
    report = comp.last_report
    # a document without a value is not judged by its text
    assert report is not None and report.unjudged == (1, 3) and report.kept == (2,)
    assert "no value" in report.reason(3)["reason"]
    [(pos, rule, by)] = report.dropped
    assert pos == 0 and rule == mem.policy and report.reason(0)["status"] == "dropped"
    assert mem.audit()[-1].details["query"] == "what does acme cost?"
    # alone with the memory, the stale document is dropped in favour of the memory's fact
    comp.compress_documents(docs[:2], "acme?")
    assert comp.last_report is not None
    assert comp.last_report.reason(0)["dominated_by"]["id"] == f.id


def test_langchain_retriever_wrapper() -> None:
    mem, _ = _memory()
    docs = _docs()

    class Fixed(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return docs

    r = TruthkeeperRetriever(retriever=Fixed(), memory=mem)
    assert [d.page_content for d in r.invoke("acme?")] == \
        [d.page_content for d in docs[1:]]
    assert r.last_report is not None and r.last_report.unjudged == (1, 3)


def test_llamaindex_postprocessor_drops_stale_nodes() -> None:
    mem, f = _memory()
    nodes = [NodeWithScore(node=TextNode(text=d.page_content, metadata=dict(d.metadata)),
                           score=1.0) for d in _docs()]
    pp = TruthkeeperPostprocessor(memory=mem)
    out = pp.postprocess_nodes(nodes, QueryBundle("acme?"))
    assert [n.node.get_content() for n in out] == [n.node.get_content() for n in nodes[1:]]
    assert "truthkeeper" not in out[0].node.metadata
    assert out[1].node.metadata["truthkeeper"]["status"] == "conflict"  # against f
    assert "truthkeeper" in out[1].node.excluded_llm_metadata_keys  # never in the text
    assert "truthkeeper" not in out[1].node.get_content(metadata_mode="llm")
    assert len(pp.postprocess_nodes(nodes[:2])) == 1
    assert pp.last_report is not None and pp.last_report.dropped[0][2] == f
    # a scope's view judges against its scope and the shared layer, never another scope
    ana = mem.scope("user:ana")
    ana.add("bob", "city", "Bergen", source="chat", valid_from="2026-06-01")
    bob = TruthkeeperPostprocessor(memory=mem.scope("user:bob"))
    assert len(bob.postprocess_nodes(nodes[:1])) == 0  # the shared price makes it stale
    oslo = [NodeWithScore(node=TextNode(text="bob lives in Oslo", metadata={
        "subject": "bob", "attribute": "city", "value": "Oslo", "valid_from": "2026-01-01"}))]
    assert len(bob.postprocess_nodes(oslo)) == 1  # ana's newer fact is not bob's


def test_documents_as_vector_stores_hold_them_never_fail_the_retrieval() -> None:
    mem = Memory(schema={"price": {"value_type": "number"}})
    mem.add("acme", "price", 135, source="billing", tier="verified", valid_from="2026-06-01")
    docs = [
        Document("acme: 120", metadata={"subject": "acme", "attribute": "price", "value": "120",
                                        "valid_from": 1770231626}),           # epoch seconds
        Document("acme: 135", metadata={"subject": "acme", "attribute": "price", "value": "135",
                                        "valid_from": "2026-06-02T10:00:00"}),  # naive: UTC
        Document("acme: ???", metadata={"subject": "acme", "attribute": "price", "value": 99,
                                        "valid_from": "June 2025"}),           # unusable
        Document("acme: lots", metadata={"subject": "acme", "attribute": "price",
                                         "value": "lots", "valid_from": "2026-01-01"}),
        Document("acme: 1", metadata={"subject": "acme", "attribute": "price", "value": 1,
                                      "valid_from": "2026-01-01", "tier": "no-such-tier"}),
        Document("acme: 140", metadata={"subject": "acme", "attribute": "price", "value": 140,
                                        "valid_from": 1783000000000}),        # milliseconds
    ]
    comp = TruthkeeperCompressor(memory=mem)
    out = comp.compress_documents(docs, "acme price?")
    report = comp.last_report
    assert report is not None
    # Feb 2026's 120 is older than the stored 135; "135" (June 2) is older than 140 (July 2)
    assert [d[0] for d in report.dropped] == [0, 1] and report.kept == (5,)
    assert report.unjudged == (2, 3, 4)
    why = dict(report.why_unjudged)
    assert "unusable" in why[2] and "number" in why[3] and "refused" in why[4]
    assert [d.page_content for d in out] == ["acme: ???", "acme: lots", "acme: 1", "acme: 140"]


def test_documents_the_memory_refuses_leave_one_drop_each_in_the_audit_log() -> None:
    """Each refused document was found by filtering every document again, and then each
    alone: every call logged its drops, so 40 stale documents among 10 refused ones left
    220 drops in the audit log. One call decides now; an error names its item."""
    mem = Memory(schema={"price": {"value_type": "number"}})
    for i in range(50):
        mem.add(f"p{i}", "price", 100 + i, source="shop", valid_from="2026-06-01")
    mds: list[dict[str, Any]] = [
        {"subject": f"p{i}", "attribute": "price", "value": "lots" if i % 5 == 0 else i,
         "valid_from": "2026-01-01"} for i in range(50)]
    mds[1] = {"fact_id": "no-such-fact"}
    mds[2] = {**mds[2], "tier": "human"}  # protected: a document cannot claim it
    from truthkeeper.integrations.documents import judge_documents

    report = judge_documents(mem, mds, [""] * 50, "prices?")
    assert report.unjudged == (0, 1, 2, 5, 10, 15, 20, 25, 30, 35, 40, 45)
    why = dict(report.why_unjudged)
    assert why[5] == ("refused by the memory: InvalidFact: value must be a number (declared "
                      "value_type 'number'), got 'lots'")
    assert why[1].endswith("UnknownFact: it is not a fact of this memory: 'no-such-fact'")
    assert "TierNotAuthorized: tier 'human' is protected" in why[2]
    assert len(report.dropped) == 38 and report.kept == ()
    drops = [e for e in mem.audit() if e.kind == "drop"]
    assert len(drops) == 38 and {e.details["query"] for e in drops} == {"prices?"}


def test_a_set_members_removal_kept_as_text_by_a_vector_store_is_judged() -> None:
    """A vector store that keeps metadata as text hands back ``present: "false"``: the
    document passed unjudged ("present must be a bool"). It is read as false, as MCP reads
    that argument."""
    mem = Memory()
    mem.declare("pets", cardinality="many")
    mem.add("ana", "pets", "cat", source="crm", valid_from="2026-01-01")
    meta = {"subject": "ana", "attribute": "pets", "value": "cat", "valid_from": "2026-06-01"}
    comp = TruthkeeperCompressor(memory=mem)
    for present in ("false", "False ", False):
        comp.compress_documents([Document("cat is gone", metadata={**meta,
                                                                   "present": present})], "?")
        assert comp.last_report is not None and comp.last_report.unjudged == ()
        assert comp.last_report.kept == (0,) and comp.last_report.disputed  # judged
    comp.compress_documents([Document("x", metadata={**meta, "present": "no"})], "?")
    assert comp.last_report is not None and comp.last_report.unjudged == (0,)


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(["fact_id", "subject", "attribute", "value", "valid_from",
                            "valid_to", "tier", "source", "present"]), bad=hostile_values)
@example(key="fact_id", bad=10**5000)
def test_no_metadata_value_fails_the_retrieval(key: str, bad: Any) -> None:
    """Whatever a vector store hands back as one field of a document's metadata, the
    document passes (judged, or unjudged with its reason) and the others are judged. A
    ``fact_id`` of more than 4,300 digits raised ValueError."""
    mem = _HOSTILE_MEMORY
    good = {"subject": "acme", "attribute": "price", "value": 90, "valid_from": "2026-01-01"}
    docs = [Document("acme: x", metadata={**good, "value": 95, key: bad}),
            Document("acme: 90", metadata=good)]
    comp = TruthkeeperCompressor(memory=mem)
    out = comp.compress_documents(docs, "acme price?")
    report = comp.last_report
    assert report is not None
    dropped = [d[0] for d in report.dropped]
    assert sorted([*report.kept, *dropped, *report.unjudged]) == [0, 1]
    assert 1 in dropped  # the stored 135 of June makes January's 90 stale
    assert len(out) == len(report.kept) + len(report.unjudged)


_HOSTILE_MEMORY = Memory()
_HOSTILE_MEMORY.add("acme", "price", 135, source="billing", valid_from="2026-06-01")


def test_a_kept_document_about_a_slot_the_memory_holds_nothing_of_is_not_called_current(
) -> None:
    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    mem.add("ana", "city", "Lisbon", source="s", valid_from="2026-01-01")
    mem.add("bob", "city", "Porto", source="s", valid_from="2026-01-01")
    mem.erase(subject="ana")
    about = [("ana", "Lisbon"), ("zed", "Oslo"), ("bob", "Porto")]
    docs = [Document(f"{s} lives in {v}", metadata={
        "subject": s, "attribute": "city", "value": v, "valid_from": "2026-01-01"})
        for s, v in about]
    comp = TruthkeeperCompressor(memory=mem)
    out = comp.compress_documents(docs, "where?")
    assert comp.last_report is not None and comp.last_report.kept == (0, 1, 2)
    assert comp.last_report.unknown == (0, 1)  # erased; never told
    assert [d.metadata["truthkeeper"]["status"] for d in out] == ["unknown", "unknown",
                                                                   "current"]
    assert "no fact on this slot" in out[0].metadata["truthkeeper"]["reason"]
    err, res = _call(build_server(mem), "filter_context", {"items": [
        {"subject": s, "attribute": "city", "value": v, "valid_from": "2026-01-01"}
        for s, v in about]})
    assert not err and [k.get("memory") for k in res["kept"]] == ["unknown", "unknown", None]


def test_a_document_disputed_by_a_poll_names_its_strongest_few_facts_not_all() -> None:
    """A slot where 40 sources answered at once (a poll: 40 heads, none obsolete) and a
    newer rumour about it: the rumour is a conflict with every head, and its metadata
    listed all 40 facts, in an agent's context, for each such document. It names five,
    the highest tier and then the newest first, and counts the rest."""
    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    mem.add_many([{"subject": "poll", "attribute": "answer", "value": f"v{i}",
                   "source": f"s{i}", "tier": "verified" if i in (7, 30) else "agent",
                   "valid_from": "2026-03-01" if i in (7, 30) else "2026-03-05"}
                  for i in range(40)])
    meta = {"subject": "poll", "attribute": "answer", "value": "rumour",
            "valid_from": "2026-04-01"}
    [doc] = TruthkeeperCompressor(memory=mem).compress_documents(
        [Document("the answer is rumour", metadata=meta)], "answer?")
    said = doc.metadata["truthkeeper"]
    assert said["status"] == "conflict" and said["memory_omitted"] == 35
    assert sorted(m["value"] for m in said["memory"][:2]) == ["v30", "v7"]  # verified first
    assert len(said["memory"]) == 5 and {m["tier"] for m in said["memory"][2:]} == {"agent"}
    err, res = _call(build_server(mem), "filter_context", {"items": [meta]})
    assert not err and len(res["kept"][0]["held"]) == 5 and res["kept"][0]["held_omitted"] == 35
    rumour = Candidate(**meta, tier="unverified")
    assert len(mem.filter([rumour]).disputed[0].heads) == 40  # the API has them all


def test_mcp_answers_on_a_slot_a_thousand_sources_answered_stay_small() -> None:
    """A poll: 1,000 sources answer at once, 300 values. ``recall`` was 0.7 MB of JSON
    (every head, every candidate with all its sources, a why() of every head, which alone
    took 3.5 s), ``about`` and ``decide`` 50-60 KB. Each names at most ten of a list, the
    most probable first, and counts the rest; why() spells out twenty heads."""
    import json

    from truthkeeper.integrations.mcp import SHOWN, build_server

    mem = Memory()
    mem.add_many([{"subject": "poll", "attribute": "answer", "value": f"v{i % 300}",
                   "source": f"s{i}", "valid_from": "2026-03-01"} for i in range(999)]
                 + [{"subject": "poll", "attribute": "answer", "value": "v7",
                     "source": f"t{i}", "valid_from": "2026-03-01"} for i in range(30)])
    server = build_server(mem)
    slot = {"subject": "poll", "attribute": "answer"}
    err, rec = _call(server, "recall", slot)
    assert not err and rec["status"] == "conflict"
    assert (len(rec["heads"]), rec["heads_omitted"]) == (SHOWN, 1029 - SHOWN)
    assert (len(rec["candidates"]), rec["candidates_omitted"]) == (SHOWN, 300 - SHOWN)
    top = rec["candidates"][0]
    assert top["value"] == "v7" and top["sources_omitted"] == 34 - SHOWN  # 4 + 30 sources
    assert [c["p"] for c in rec["candidates"]] == sorted((c["p"] for c in rec["candidates"]),
                                                         reverse=True)
    err, about = _call(server, "about", {"subject": "poll"})
    assert not err and about["attributes"]["answer"]["candidates_omitted"] == 300 - SHOWN
    err, dec = _call(server, "decide", slot)
    assert not err and dec["alternatives"][0]["value"] == "v7"
    assert dec["alternatives_omitted"] == 300 - SHOWN
    assert max(len(json.dumps(x)) for x in (rec, about, dec)) < 20_000
    why = mem.current("poll", "answer").why()
    assert len(why.children) == 21 and len(why.details["heads"]) == 1029
    assert why.children[-1].label.startswith("... and 1009 more heads")


def test_mcp_answers_about_a_large_set_name_a_page_of_its_members() -> None:
    """A team of 2,000 members: ``recall`` was 94 KB of JSON (every member in ``value``, and
    again in the justification's first line), ``decide`` 86 KB, ``about`` 81 KB with 300
    attributes. Members and attributes now come a page at a time."""
    from truthkeeper.integrations.mcp import PAGE, SHOWN, build_server

    mem = Memory()
    mem.declare("member", cardinality="many")
    team = sorted(f"person number {i}" for i in range(2000))
    mem.add_many([{"subject": "team", "attribute": "member", "value": v, "source": "hr",
                   "valid_from": "2026-01-01"} for v in team])
    for a in range(300):
        mem.add("team", f"attr{a:03}", f"value {a}", source="hr")
    server = build_server(mem)
    slot = {"subject": "team", "attribute": "member"}
    err, rec = _call(server, "recall", slot)
    assert not err and rec["status"] == "resolved"
    assert (rec["value"], rec["value_omitted"], rec["next_offset"]) == (
        team[:PAGE], 2000 - PAGE, PAGE)
    assert "... and 1980 more members)" in rec["why"].splitlines()[0]
    shown: list[str] = []
    offset: int | None = 0
    while offset is not None:  # every member, once, in order
        err, page = _call(server, "recall", {**slot, "offset": offset, "limit": 500})
        shown += page["value"]
        offset = page["next_offset"]
    assert shown == team
    err, last = _call(server, "recall", {**slot, "offset": 1990})
    assert (len(last["value"]), last["value_omitted"], last["next_offset"]) == (10, 1990, None)
    assert _call(server, "recall", {**slot, "limit": 501})[0]  # past the largest page
    err, about = _call(server, "about", {"subject": "team"})
    assert (about["total"], about["next_offset"], len(about["attributes"])) == (301, PAGE, PAGE)
    err, rest = _call(server, "about", {"subject": "team", "offset": 300})
    assert list(rest["attributes"]) == ["member"] and rest["next_offset"] is None
    assert rest["attributes"]["member"]["value"] == team[:SHOWN]
    assert rest["attributes"]["member"]["value_omitted"] == 2000 - SHOWN
    err, dec = _call(server, "decide", slot)
    assert (dec["value"], dec["value_omitted"]) == (team[:PAGE], 2000 - PAGE)
    assert dec["alternatives"][0]["value_omitted"] == 2000 - PAGE
    assert max(len(json.dumps(x)) for x in (rec, about, dec)) < 20_000
    err, plain = _call(server, "recall", {"subject": "team", "attribute": "attr007"})
    assert plain["value"] == "value 7" and "next_offset" not in plain
    mem.add("team", "coords", [1, 2, 3], source="hr")  # a list value is no set: not cut
    err, coords = _call(server, "recall", {"subject": "team", "attribute": "coords",
                                           "limit": 1})
    assert coords["value"] == [1, 2, 3] and "value_omitted" not in coords


def test_mcp_history_and_slots_come_a_page_at_a_time(tmp_path: Path) -> None:
    """``history`` of a poll's slot returned all 1,029 facts, and ``slots`` listed every
    slot, filtered by prefix afterwards and cut silently at 1,000: an agent took the page
    for the whole. Both now return a page (by default 50; history's newest) with the total
    and the next page's offset, and ``slots`` finds a prefix's slots on a lazily opened
    memory's index without reading a slot in."""
    from truthkeeper.integrations.mcp import PAGE, build_server

    db = str(tmp_path / "m.db")
    with Memory(db) as mem:
        mem.add_many([{"subject": "poll", "attribute": "answer", "value": f"v{i % 300}",
                       "source": f"s{i}", "valid_from": f"2026-03-01T00:{i // 60 % 60:02}:"
                       f"{i % 60:02}Z"} for i in range(1029)]
                     + [{"subject": f"acct-{i:04}", "attribute": "owner", "value": "x",
                         "source": "s"} for i in range(1200)]
                     + [{"subject": "ana", "attribute": "city", "value": "Porto",
                         "source": "s"}])
        mem.scope("user:ana").add("acct-0007", "plan", "pro", source="s")
        mem.scope("user:bob").add("acct-0008", "plan", "free", source="s")
        whole = [f.id for f in mem.history("poll", "answer")]
    mem = Memory(db, lazy=True)
    server = build_server(mem)
    slot = {"subject": "poll", "attribute": "answer"}
    err, page = _call(server, "history", slot)
    assert not err and (page["total"], page["offset"], page["next_offset"]) == (
        1029, 1029 - PAGE, None)
    assert [f["id"] for f in page["facts"]] == whole[-PAGE:]  # the newest, oldest first
    err, page = _call(server, "history", {**slot, "offset": 0, "limit": 7})
    assert [f["id"] for f in page["facts"]] == whole[:7] and page["next_offset"] == 7
    err, page = _call(server, "history", {**slot, "offset": 1025, "limit": 7})
    assert [f["id"] for f in page["facts"]] == whole[1025:] and page["next_offset"] is None
    assert _call(server, "history", {**slot, "limit": 501})[0]  # past the largest page
    assert _call(server, "history", {**slot, "offset": -1})[0]
    got, offset = [], 0
    while offset is not None:
        err, page = _call(server, "slots", {"prefix": "ACCT-", "offset": offset,
                                            "limit": 500})
        assert not err and page["total"] == 1200
        got += page["slots"]
        offset = page["next_offset"]
    assert got == [{"subject": f"acct-{i:04}", "attribute": "owner"} for i in range(1200)]
    assert mem._store.lazy.loaded == {"poll\x1fanswer"}  # on the index: no acct slot read
    err, page = _call(server, "slots", {"prefix": "acct-000", "scope": "user:ana"})
    assert page["total"] == 11 and {"subject": "acct-0007", "attribute": "plan"} in page[
        "slots"] and {"subject": "acct-0008", "attribute": "plan"} not in page["slots"]
    assert _call(server, "slots", {})[1]["total"] == 1202
    assert mem.slots(prefix="acct-00") == Memory(db).slots(prefix="acct-00")
    mem.close()


def test_a_kept_document_the_memory_disagrees_with_is_called_a_conflict_not_current() -> None:
    """A newer forum post (unverified) about a price the memory holds verified is not stale
    under the default policy, so it is kept, and a copy of the verified price retrieved
    without its tier is dropped as older. It was labelled "current": an agent's context
    then held only the rumour, marked current. It is now a conflict naming the memory's
    fact, in every adapter."""
    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    held = mem.add("acme", "price", 120, source="catalog", tier="verified",
                   valid_from="2026-03-01")
    about = [(150, "2026-04-01", "forum"), (120, "2026-03-01", None)]
    meta = [{"subject": "acme", "attribute": "price", "value": v, "valid_from": t,
             **({"source": src} if src else {})} for v, t, src in about]
    comp = TruthkeeperCompressor(memory=mem)
    out = comp.compress_documents([Document(f"acme costs {m['value']}", metadata=m)
                                   for m in meta], "price?")
    assert [d.page_content for d in out] == ["acme costs 150"]
    said = out[0].metadata["truthkeeper"]
    assert said["status"] == "conflict"
    assert [(m["fact_id"], m["value"], m["tier"]) for m in said["memory"]] == [
        (held.id, 120, "verified")]
    nodes = TruthkeeperPostprocessor(memory=mem).postprocess_nodes(
        [NodeWithScore(node=TextNode(text="acme costs 150", metadata=meta[0]), score=1.0)],
        query_bundle=QueryBundle("price?"))
    assert nodes[0].node.metadata["truthkeeper"]["status"] == "conflict"
    err, res = _call(build_server(mem), "filter_context", {"items": meta})
    assert not err and [(k["index"], k.get("memory")) for k in res["kept"]] == [
        (0, "conflict")]
    assert res["kept"][0]["held"][0]["fact_id"] == held.id
    # a document that agrees with the memory, or makes its fact obsolete, is current
    newer = {**meta[0], "value": 130, "tier": "verified", "valid_from": "2026-05-01"}
    for m in (meta[1], newer):
        kept = comp.compress_documents([Document("x", metadata=m)], "price?")
        assert kept[0].metadata["truthkeeper"] == {"status": "current"}


def test_mcp_slots_reads_a_prefix_as_the_subjects_are_folded() -> None:
    """The prefix was only stripped and casefolded: a decomposed "CAFÉ" (as some keyboards
    and clients send it) or a doubled space found nothing, though the subjects are kept
    NFC with whitespace collapsed."""
    import unicodedata

    from truthkeeper.integrations.mcp import build_server

    mem = Memory()
    for s in ("Café Nuevo", "cafeteria", "new york office", "newark"):
        mem.add(s, "city", "x", source="s")
    server = build_server(mem)
    for prefix, want in [(unicodedata.normalize("NFD", "CAFÉ"), ["café nuevo"]),
                         ("new  york", ["new york office"]), ("New ", ["new york office"]),
                         ("new", ["new york office", "newark"])]:
        err, res = _call(server, "slots", {"prefix": prefix})
        assert not err and [r["subject"] for r in res["slots"]] == want, prefix


# ---------------------------------------------------------------- CLI for memory files


def test_a_claim_that_a_set_lacks_a_member_reads_as_such(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """``why`` and ``truthkeeper query`` showed a claim that a set does not hold a value
    (``present=False``) as the value itself: "acme.office = 'Porto' (head)" for the
    claim that Porto is no longer an office, and a contested member's two sides alike."""
    db = tmp_path / "m.db"
    with Memory(db, schema={"office": {"cardinality": "many"}}) as mem:
        mem.add("acme", "office", "Lisbon", source="hr", tier="verified", valid_from="2026-01-01")
        mem.add("acme", "office", "Porto", source="hr", tier="verified", valid_from="2026-01-01")
        gone = mem.add("acme", "office", "Porto", source="hr", tier="verified",
                       valid_from="2026-06-01", present=False)
        assert mem.current("acme", "office").value == ("Lisbon",)
        assert f"fact {gone.id}: acme.office = not 'Porto' (head)" in str(mem.why(gone))
        assert "acme.office = not 'Porto'" in str(mem.current("acme", "office").why())
        mem.add("acme", "office", "Lisbon", source="bot", valid_from="2026-07-01",
                present=False)  # a lower tier: contested, not decided
    capsys.readouterr()
    assert main(["query", str(db), "acme", "office", "--history"]) == 0
    text = capsys.readouterr().out
    assert f"{gone.id} [head] not 'Porto' said by hr" in text
    assert main(["query", str(db), "acme", "office"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "CONFLICT" in lines[0]
    assert sorted(x.split(":")[0].strip() for x in lines[1:]) == [
        "'Lisbon'", "not 'Lisbon'", "not 'Porto'"]


def test_cli_memory_file_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, out = tmp_path / "m.db", tmp_path / "e.jsonl"
    with Memory(db, policy="temporal") as mem:  # a non-default policy: read from the file
        mem.add("ana", "city", "Lisbon", source="chat", valid_from="2026-01-01")
        mem.add("ana", "city", "Porto", source="chat", valid_from="2026-06-01")
        mem.add("ana", "job", "nurse", source="a", valid_from="2026-01-01")
        mem.add("ana", "job", "chef", source="b", valid_from="2026-01-01")
        mem.scope("user:bob").add("me", "city", "Oslo", source="chat")
    capsys.readouterr()
    assert main(["inspect", str(db)]) == 0
    text = capsys.readouterr().out
    assert "4 facts in 2 slots" in text and "policy temporal" in text and "ana.job" in text
    assert main(["inspect", str(db), "--json", "--scope", "user:bob"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["facts"] == 5 and data["chain"]["ok"]  # bob's own and the shared layer's
    assert main(["query", str(db), "ana", "city"]) == 0
    assert "ana.city = 'Porto'" in capsys.readouterr().out
    assert main(["query", str(db), "ana", "--json"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert q["city"]["value"] == "Porto" and q["job"]["status"] == "conflict"
    assert main(["query", str(db), "ana", "city", "--valid-at", "2026-03-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["city"]["value"] == "Lisbon"
    assert main(["query", str(db), "ana", "city", "--history"]) == 0
    assert "[superseded] 'Lisbon'" in capsys.readouterr().out
    assert main(["verify", str(db)]) == 0 and "ok: " in capsys.readouterr().out
    assert main(["export", str(db), str(out)]) == 0
    assert "wrote 5 events" in capsys.readouterr().out
    copy = tmp_path / "copy.db"
    assert main(["import", str(copy), str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lines_read"] == 5
    with Memory(copy) as again:  # created with the default policy, facts imported
        assert again.current("ana", "city").value == "Porto"
    assert main(["query", str(tmp_path / "missing.db"), "ana"]) == 2
    assert "no memory file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["import", str(tmp_path / "new.db"), str(bad)]) == 2  # refused: no file left
    assert "line 1" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("new.db")) == []
    assert main(["import", str(copy), str(bad)]) == 2  # an existing memory stays as it was
    capsys.readouterr()
    with Memory(copy) as again:
        assert again.current("ana", "city").value == "Porto"
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and "truthkeeper 0." in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    helptext = capsys.readouterr().out
    for cmd in ("inspect", "query", "verify", "export", "import", "serve", "demo", "selftest",
                "check-policy", "bench", "eval"):
        assert cmd in helptext


def test_cli_verify_reports_a_broken_chain(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add("ana", "city", "Lisbon", source="s")
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("UPDATE events SET recorded_at = recorded_at + 1 WHERE seq = 2")
    con.commit()
    con.close()
    assert main(["verify", str(db), "--json"]) == 1
    v = json.loads(capsys.readouterr().out)
    assert not v["ok"] and v["first_bad"] == 2


def test_agent_loop_example_runs_end_to_end(tmp_path: Path) -> None:
    import subprocess

    script = Path(__file__).parent.parent / "examples" / "agent_loop.py"
    run = subprocess.run([sys.executable, str(script), "--db", str(tmp_path / "a.db")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    for line in ("dropped as stale: ['Ana lives in Berlin", "a new process reopens",
                 "ana.city: Lisbon", "decide acme.price: answer 135", "chain verifies: True",
                 "pets: ('Rex',)", "ana.employer is unknown", "after the user confirms: "
                 "ana.employer = Initech", "the shared facts stay: 9-17"):
        assert line in run.stdout


@contextlib.contextmanager
def _http_server(tmp_path: Path, *args: str, token: str | None = None) -> Iterator[str]:
    """``truthkeeper serve --http`` on a free loopback port; yields its /mcp URL."""
    import os
    import socket
    import subprocess
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "TRUTHKEEPER_MCP_TOKEN"}
    if token is not None:
        env["TRUTHKEEPER_MCP_TOKEN"] = token
    proc = subprocess.Popen([sys.executable, "-m", "truthkeeper", "serve", "--db",
                             str(tmp_path / "h.db"), "--http", f"127.0.0.1:{port}", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    with proc:  # closes its pipe
        try:
            for _ in range(200):  # until it listens
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            proc.wait(timeout=30)


async def _http_calls(url: str, calls: list[tuple[str, dict[str, Any]]],
                      headers: dict[str, str] | None = None) -> list[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as client, \
            streamable_http_client(url, http_client=client) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        return [await session.call_tool(name, a) for name, a in calls]


def _post_status(url: str, authorization: str | None,
                 extra: dict[str, str] | None = None) -> int:
    """The HTTP status of an MCP initialize request (``extra``: more headers)."""
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}).encode()
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    headers.update(extra or {})
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers),  # noqa: S310
                                    timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_mcp_server_over_streamable_http(tmp_path: Path) -> None:
    with _http_server(tmp_path, "--scope", "user:ana") as url:
        _, ok, other = asyncio.run(_http_calls(url, [
            ("remember", {"subject": "me", "attribute": "city", "value": "Lisbon",
                          "source": "user:ana", "tier": "verified"}),
            ("recall", {"subject": "me", "attribute": "city"}),
            ("recall", {"subject": "me", "attribute": "city", "scope": "user:bob"})]))
    assert not ok.is_error and ok.structured_content["value"] == "Lisbon"
    assert other.is_error and "bound to scope" in other.content[0].text


def test_mcp_over_http_with_a_token_answers_only_its_bearer(tmp_path: Path) -> None:
    token = "a-shared-secret-of-some-length"
    recall = [("recall", {"subject": "me", "attribute": "city"})]
    with _http_server(tmp_path, token=token) as url:
        for auth in (None, "Bearer not-the-secret", f"Basic {token}", f"Bearer {token}x"):
            assert _post_status(url, auth) == 401
        assert _post_status(url, f"Bearer {token}") == 200
        [ok] = asyncio.run(_http_calls(url, recall, {"Authorization": f"Bearer {token}"}))
    assert not ok.is_error and ok.structured_content["status"] == "unknown"


def test_mcp_over_http_without_a_token_answers_no_web_page(tmp_path: Path) -> None:
    """Served on loopback without a token, the memory is not reachable from a web page the
    user opens (DNS rebinding: a page of another site whose name resolves to 127.0.0.1, or
    a request of a page's script): a foreign Host or Origin is refused."""
    with _http_server(tmp_path) as url:
        port = url.split(":")[2].split("/")[0]
        assert _post_status(url, None) == 200
        assert _post_status(url, None, {"Host": f"evil.example:{port}"}) == 421
        assert _post_status(url, None, {"Origin": "http://evil.example"}) == 403
        assert _post_status(url, None, {"Origin": f"http://localhost:{port}"}) == 200


@pytest.mark.parametrize(("where", "token", "says"), [
    ("0.0.0.0:8765", None, "without authentication"),
    ("[::]:8765", None, "without authentication"),
    ("127.0.0.1:8765", "short", "at least 16"),
])
def test_mcp_over_http_refuses_to_serve_unprotected(tmp_path: Path, where: str,
                                                    token: str | None, says: str) -> None:
    """Without a token the server stays on a loopback address; nothing is opened first.
    (A subprocess with a timeout: a server that started anyway fails the test, not hangs.)"""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "TRUTHKEEPER_MCP_TOKEN"}
    if token is not None:
        env["TRUTHKEEPER_MCP_TOKEN"] = token
    db = tmp_path / "never.db"
    run = subprocess.run([sys.executable, "-m", "truthkeeper", "serve", "--db", str(db),
                          "--http", where], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 2 and says in run.stderr and not db.exists()


def test_mcp_stdio_answers_every_request_it_cannot_take(tmp_path: Path) -> None:
    """A request nested past what the SDK parses, holding a lone surrogate, or an integer
    too long for Python to convert, gets an error reply with its id (it used to get none,
    and the client waited forever)."""
    import select
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "truthkeeper", "serve", "--db",
                             str(tmp_path / "m.db")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((line + "\n").encode())
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, f"no reply to {line[:80]}"
        return json.loads(proc.stdout.readline())

    def call(rid: int, name: str, args: str) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": name, "arguments": "ARGS"}}).replace(
                               '"ARGS"', args)

    def remember(value: str) -> str:
        return '{"subject":"me","attribute":"x","value":' + value + ',"source":"s"}'

    try:
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}))
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        deep = "[" * 300 + "1" + "]" * 300
        for rid, line, says in [
            (2, call(2, "remember", remember(deep)), "nests more than"),
            (3, call(3, "remember", '{"subject":"me\\ud800","attribute":"x","value":1,'
                                    '"source":"s"}'), "lone surrogate"),
            (4, call(4, "why", '{"item":"p(\'\\ud800\')"}'), "lone surrogate"),
            (7, call(7, "remember", remember("1" + "0" * 5000)), "integer of 5001 digits"),
        ]:
            reply = ask(line)
            assert reply["id"] == rid and says in reply["error"]["message"]
        # 110 deep passes the guard and is refused by the library, as a tool error
        v = "[" * 110 + "1" + "]" * 110
        reply = ask(call(5, "remember", remember(v)))
        assert reply["id"] == 5 and reply["result"]["isError"]
        reply = ask(call(6, "recall", '{"subject":"me","attribute":"x"}'))
        assert reply["id"] == 6 and not reply["result"]["isError"]
    finally:
        proc.kill()
        proc.communicate(timeout=30)  # reaps it and closes its pipes


def test_mcp_names_the_tier_the_user_speaks_at() -> None:
    """With "verified" protected too, the server offers only the tiers below it and tells
    the agent to store the user's statements at the highest of them, not at "verified"."""
    from truthkeeper.integrations.mcp import build_server

    mem = Memory(protected_tiers=("verified",))
    server = build_server(mem)
    [remember] = [t for t in asyncio.run(server.list_tools()) if t.name == "remember"]
    desc = remember.input_schema["properties"]["tier"]["description"]
    assert desc.startswith("one of agent, unverified: 'agent'")
    err, msg = _call(server, "remember", {"subject": "ana", "attribute": "city",
                                          "value": "Lisbon", "source": "user:ana",
                                          "tier": "verified"})
    assert err and "store the user's statements as 'agent'" in msg
    assert "tier 'agent' for what the user states" in server.instructions
    assert "tier 'verified' for what the user states" in build_server(Memory()).instructions
