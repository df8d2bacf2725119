"""The errors of the bundle format and the base of llm-do's own errors. Standard library only.

`BundleRefused` is a bundle the runtime will not run (exit 3); its message is one line saying why
and what to do. It is apart from the loader (`llm_do.runtime.bundle`) so that the reader
(`reader.verify`), the loader and the import hook (`verified_imports`) can raise it without
importing each other.
"""

from __future__ import annotations

REBUILD = "run `llm-do build`"
"""What every refusal of a bundle tells the user to do."""


class LlmDoError(Exception):
    """Base of the runtime's errors (`llm_do.runtime.errors`)."""


class BundleRefused(Exception):
    """The bundle cannot be run as it is; the message is one line saying why and what to do."""
