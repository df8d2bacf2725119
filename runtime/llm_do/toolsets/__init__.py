"""Helpers that Python toolsets of the `.agent` era import (`llm_do.toolsets.approval`)."""
