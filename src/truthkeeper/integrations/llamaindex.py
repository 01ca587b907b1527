"""LlamaIndex: a node postprocessor that drops stale nodes.

Node metadata carries ``subject``, ``attribute``, ``value``, ``valid_from`` (and optionally
``valid_to``, ``source``, ``tier``), or a ``fact_id``; see :mod:`.documents`. Nodes that are
kept get ``metadata["truthkeeper"] = {"status": "current"}`` (``"unknown"`` with a reason
where the memory holds no fact on the slot), a key excluded from what the
LLM and the embedder read (a verdict never enters the text); nodes the memory cannot judge
pass untouched, and ``last_report`` says what happened to each (with the reason).

Needs ``llama-index-core`` (``pip install 'truthkeeper[llamaindex]'``).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import PrivateAttr

from .documents import DocumentReport, judge_documents

__all__ = ["TruthkeeperPostprocessor"]


class TruthkeeperPostprocessor(BaseNodePostprocessor):
    """Drops the nodes the memory knows to be stale (Phi_T under its policy)."""

    memory: Any
    """A :class:`truthkeeper.Memory` (or a scope's view of one)."""
    _last: DocumentReport | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "TruthkeeperPostprocessor"

    @property
    def last_report(self) -> DocumentReport | None:
        """What the last call kept, dropped (and why) and left unjudged."""
        return self._last

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        report = judge_documents(self.memory, [n.node.metadata for n in nodes],
                                 [n.node.get_content() for n in nodes],
                                 None if query_bundle is None else query_bundle.query_str)
        self._last = report
        out: list[NodeWithScore] = []
        for pos, n in enumerate(nodes):
            if pos in report.kept:
                n.node.metadata["truthkeeper"] = report.reason(pos)
                for keys in (n.node.excluded_llm_metadata_keys,
                             n.node.excluded_embed_metadata_keys):
                    if "truthkeeper" not in keys:  # a verdict is for the code, not the LLM
                        keys.append("truthkeeper")
            if pos in report.kept or pos in report.unjudged:
                out.append(n)
        return out
