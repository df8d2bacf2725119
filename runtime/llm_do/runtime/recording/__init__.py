"""Recorded model traffic: the cassette format, recording a run (`--record`), replaying one (`llm-do
test`). Nothing here is on the plain `exec` path: the CLI imports it only when asked to record or test."""
