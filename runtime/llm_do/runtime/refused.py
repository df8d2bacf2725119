"""A bundle the runtime will not run (exit 3): its one exception, apart so that both the loader
(`bundle`) and the import hook (`verified_imports`) can raise it without importing each other."""

from __future__ import annotations

REBUILD = "run `llm-do build`"


class BundleRefused(Exception):
    """The bundle cannot be run as it is; the message is one line saying why and what to do."""
