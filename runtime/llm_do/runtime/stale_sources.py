"""Whether the project changed since its lock was built, for the sources a run does not read.

A lock runs as it was built: the content of worker files, templates and the manifest is in it, so
an edit to them changes nothing until the next `llm-do build`, and the runtime does not refuse the
bundle for it. It says so once, though, so nobody wonders why an edit had no effect. Python sources
are another matter: they are what the runtime imports, and one that changed refuses the bundle
(`bundle._verify_python_sources`). Sources absent from disk (a lock shipped without its project)
are not reported: only files present are hashed, and nothing is parsed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .canonical import source_hash

if TYPE_CHECKING:
    from .bundle import LoadedBundle

SHOWN = 5
"""Changed files named in the note; more are counted."""


def changed_sources(bundle: LoadedBundle) -> list[str]:
    """The non-Python sources present under the project root whose hash is not the recorded one."""
    changed = []
    for rel, entry in sorted((bundle.text.get("sources") or {}).items()):
        if entry.get("kind") == "python":
            continue
        try:
            data = (bundle.root / rel).read_bytes()
        except OSError:
            continue
        if source_hash(data) != entry.get("sha256"):
            changed.append(rel)
    return changed


def stale_note(bundle: LoadedBundle) -> str | None:
    """One line saying the lock is stale and which files changed, or None when none did."""
    changed = changed_sources(bundle)
    if not changed:
        return None
    named = ", ".join(changed[:SHOWN]) + (f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else "")
    return (f"note: {bundle.path} is stale ({named} changed since the build); it runs as built: "
            "run `llm-do build` to update it")
