"""The facts of a project that has no Python to introspect, without the pydantic records.

A project without Python files, schema references or an entry function asks nothing of
introspection; its build should not pay for defining the `records` models (about a tenth of a
small project's compile). `NoPython` reads like an empty `records.Facts` to every stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .answers import ArgsCheck, ClassFact, Facts, FunctionFact, ImportEnvironment, ModuleFact, PyError


@dataclass(frozen=True)
class NoPython:
    """`Facts(imported=imported)`: nothing found, nothing failed."""

    imported: bool
    modules: Mapping[str, ModuleFact] = field(default_factory=dict)
    classes: Mapping[str, ClassFact] = field(default_factory=dict)
    args_checks: Sequence[ArgsCheck] = ()
    loaded_files: Sequence[str] = ()
    packages: Mapping[str, str] = field(default_factory=dict)
    model_factories: Mapping[str, str] = field(default_factory=dict)
    entry_function: FunctionFact | None = None
    failure: PyError | None = None
    failure_code: str | None = None
    environment: ImportEnvironment | None = None


ProjectFacts = Union["Facts", NoPython]
"""What the introspect stage gives the later stages."""
