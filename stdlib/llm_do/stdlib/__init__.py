"""The built-in toolsets: a descriptor for the compiler, an implementation for the runtime.

Descriptors (`registry`) import pydantic only; implementations (`*.toolset`) import pydantic-ai
and are loaded by the runtime when a worker that uses them runs.
"""
