"""The MCP server's stdio transport, with a guard in front of the SDK's parser.

The SDK drops, without a reply, a request it cannot parse or answer: one nested deeper
than its serialiser goes, or one whose strings hold a lone surrogate (JSON allows the
escape ``\\ud800``; UTF-8 cannot carry it back). A client then waits forever. Here every
request line is checked first (an integer too long for Python to convert is such a
request too); such a request gets a JSON-RPC error reply with its id and
the reason, and the server goes on.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["MAX_INT_DIGITS", "MAX_REQUEST_DEPTH", "request_problem", "run_stdio"]

MAX_REQUEST_DEPTH = 120
"""How deep a request's JSON may nest (values nest at most 100 deep, under the
request's own envelope)."""


MAX_INT_DIGITS = 4_000
"""The longest integer a request may hold (Python refuses to convert past 4,300 digits,
and the SDK then drops the request without a reply)."""


class _LongInt:
    """An integer too long to convert, as the guard parses it (its number of digits)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _int(text: str) -> int | _LongInt:
    digits = len(text.lstrip("-"))
    return _LongInt(digits) if digits > MAX_INT_DIGITS else int(text)


def request_problem(line: str) -> tuple[Any, str] | None:
    """``(id, reason)`` when the request on this line must be refused before the SDK sees
    it, else None (a line that is not JSON is the SDK's to report)."""
    try:
        msg = json.loads(line, parse_int=_int)
    except RecursionError:
        return None, f"the request nests more than {MAX_REQUEST_DEPTH} deep"
    except ValueError:
        return None
    rid = msg.get("id") if isinstance(msg, dict) else None
    rid = rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
    stack: list[tuple[Any, int]] = [(msg, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_REQUEST_DEPTH:
            return rid, f"the request nests more than {MAX_REQUEST_DEPTH} deep"
        if isinstance(node, _LongInt):
            return rid, (f"the request holds an integer of {node.digits} digits (at most "
                         f"{MAX_INT_DIGITS})")
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return rid, "the request holds a lone surrogate (not valid Unicode text)"
        elif isinstance(node, dict):
            stack.extend((x, depth + 1) for kv in node.items() for x in kv)
        elif isinstance(node, list):
            stack.extend((x, depth + 1) for x in node)
    return None


class _Out:
    """The protocol's output: whole lines, one writer at a time."""

    def __init__(self, raw: Any) -> None:
        import anyio

        self.file, self.lock = anyio.wrap_file(raw), anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            await self.file.write(text)

    async def flush(self) -> None:
        await self.file.flush()


class _Guarded:
    """The request lines, with the refused ones answered here instead of passed on."""

    def __init__(self, lines: Any, out: _Out) -> None:
        self.lines, self.out = lines, out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.lines:
            problem = request_problem(line)
            if problem is None:
                yield line
                continue
            reply = {"jsonrpc": "2.0", "id": problem[0],
                     "error": {"code": -32600, "message": problem[1]}}
            await self.out.write(json.dumps(reply) + "\n")
            await self.out.flush()


def run_stdio(server: Any) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdin and stdout. Anything else the process
    prints goes to stderr, so it never breaks the protocol."""
    import anyio
    from mcp.server.stdio import stdio_server

    saved, proto = os.dup(1), os.dup(1)
    os.dup2(2, 1)  # stray prints (a library's warning) reach stderr, not the client
    try:
        out = _Out(io.TextIOWrapper(os.fdopen(proto, "wb"), encoding="utf-8", newline="\n"))
        lines = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8",
                                                 errors="replace"))
        low = server._lowlevel_server  # the SDK's server, run on these streams

        async def main() -> None:
            async with stdio_server(stdin=_Guarded(lines, out),  # type: ignore[arg-type]
                                    stdout=out) as (r, w):  # type: ignore[arg-type]
                await low.run(r, w, low.create_initialization_options())

        anyio.run(main)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
