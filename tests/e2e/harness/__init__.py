"""Helpers for Tabwire's end-to-end tests: waiting, processes, the static server, CDP and the MCP client."""
