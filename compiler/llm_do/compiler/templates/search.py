"""Where an `{% include %}` (or import, extends) of a worker's template is looked for.

A directory worker's own directory first, so `{% include "header.j2" %}` in
`workers/formatter/worker.worker` finds `workers/formatter/header.j2`; then the project root (the
one place single-file workers look, as ever); then the project's `templates/`. Pure: paths only.
"""

from __future__ import annotations

import posixpath

from ..syntax.sources import lexically_confined

SHARED_TEMPLATES = "templates"


def template_candidates(name: str, directory: str | None) -> list[str]:
    """The project paths `name` may stand for, in search order. Raises OutsideRoot when `name`
    leads out of the root; a candidate that does (`../x` from a worker's directory) is skipped."""
    rel = lexically_confined(name)
    out = []
    if directory is not None:
        inside = posixpath.normpath(posixpath.join(directory, rel))
        if not inside.startswith("../") and inside != "..":
            out.append(inside)
    out.append(rel)
    if not rel.startswith(SHARED_TEMPLATES + "/"):
        out.append(posixpath.join(SHARED_TEMPLATES, rel))
    return list(dict.fromkeys(out))


SEARCH_HINT = "include paths are relative to a directory worker's own directory, the project root, or templates/"
