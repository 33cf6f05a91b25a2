"""Agents at the table: a seat held for an agent that speaks MCP (``arena mcp``, docs/llm.md),
over the protocol as a bot holds one; the referee does not know an agent from a bot."""
