"""The bundle format: what `llm-do build` writes to bundle.lock and every command reads.

One home for the format, imported by the compiler, the runtime and the stdlib alike, and importing
only the standard library (`schema`, for spec/generate.py and tests, aside):

- `model`: the bundle's shape, a TypedDict per node; THE declaration (spec/bundle.md).
- `schema`: a pydantic TypeAdapter over `model` (the JSON Schema in runtime/llm_do/cli/schemas/, validation in tests).
- `canonical`: the bytes: canonical JSON, node hashes, the digest.
- `reader`: `LockReader` (one member at a time) and `verify`, the one check of a lock's bytes.
- `views`: typed read-only views of nodes (`WorkerSpec` & co.) and the call edges.
- `approval`: the approval vocabulary and the evaluator of lowered rules.
- `names`, `mcp_config`, `format`, `version`, `errors`: what both sides must agree on.
"""
