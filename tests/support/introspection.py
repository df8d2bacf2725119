"""The tests' builds take introspection from llm-do's own cache (`llm_do.compiler.facts.cache`), in
a folder the session's xdist workers share (tests/conftest.py points `XDG_CACHE_HOME` there, for
the `llm-do` processes the tests start too). Tests of introspection itself, and tests that build
one project twice to compare the bytes of two real imports, turn it off with `real_introspection()`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from llm_do.compiler.facts.cache import NO_CACHE_VARIABLE


@contextmanager
def real_introspection() -> Iterator[None]:
    """Every build in this block (and every `llm-do` it starts) imports the project's Python afresh."""
    before = os.environ.get(NO_CACHE_VARIABLE)
    os.environ[NO_CACHE_VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NO_CACHE_VARIABLE, None)
        else:
            os.environ[NO_CACHE_VARIABLE] = before
