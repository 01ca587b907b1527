"""LangChain: a document compressor and a retriever wrapper that drop stale documents.

``Document.metadata`` carries ``subject``, ``attribute``, ``value``, ``valid_from`` (and
optionally ``valid_to``, ``source``, ``tier``), or a ``fact_id``; see :mod:`.documents`.
Kept documents that were judged get ``metadata["truthkeeper"] = {"status": "current"}``
(``{"status": "unknown", "reason": ...}`` where the memory holds no fact on the slot);
documents the memory cannot judge (no slot, no value, unusable metadata) are returned
untouched, and ``last_report`` says what happened to each (with the reason).

Needs ``langchain-core`` (``pip install 'truthkeeper[langchain]'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from .documents import DocumentReport, judge_documents

__all__ = ["TruthkeeperCompressor", "TruthkeeperRetriever"]


class TruthkeeperCompressor(BaseDocumentCompressor):
    """Drops the documents the memory knows to be stale (Phi_T under its policy)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: Any
    """A :class:`truthkeeper.Memory` (or a scope's view of one)."""
    _last: DocumentReport | None = PrivateAttr(default=None)

    @property
    def last_report(self) -> DocumentReport | None:
        """What the last call kept, dropped (and why) and left unjudged."""
        return self._last

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        docs = list(documents)
        report = judge_documents(self.memory, [d.metadata for d in docs],
                                 [d.page_content for d in docs], query)
        self._last = report
        out: list[Document] = []
        for pos, d in enumerate(docs):
            if pos in report.unjudged:
                out.append(d)
            elif pos in report.kept:
                out.append(d.model_copy(update={"metadata": {
                    **d.metadata, "truthkeeper": report.reason(pos)}}))
        return out


class TruthkeeperRetriever(BaseRetriever):
    """Wraps a retriever: what it returns passes through :class:`TruthkeeperCompressor`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    retriever: BaseRetriever
    memory: Any
    _compressor: TruthkeeperCompressor | None = PrivateAttr(default=None)

    @property
    def last_report(self) -> DocumentReport | None:
        """The report of the last retrieval (see ``TruthkeeperCompressor.last_report``)."""
        return None if self._compressor is None else self._compressor.last_report

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self._compressor is None:
            self._compressor = TruthkeeperCompressor(memory=self.memory)
        docs = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        return list(self._compressor.compress_documents(docs, query))
