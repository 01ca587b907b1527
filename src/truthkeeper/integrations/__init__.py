"""Adapters for agent frameworks: an MCP server (``.mcp``), LangChain (``.langchain``) and
LlamaIndex (``.llamaindex``). Each needs its extra; importing this package needs none."""
