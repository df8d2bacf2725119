"""The Python a case names (`schema`, `predicate`: `FILE.py:NAME`): project code, trusted like its
tools, imported from the case's scratch copy, and only from inside it (`case_paths`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from .case_paths import is_confined
from .cases import CaseProblem, LoadedCase


def project_loader(copy: Path, loaded: LoadedCase) -> Callable[[str], object]:
    """`FILE:NAME` of the project (its scratch copy), imported once per case: project code, trusted
    like its tools."""
    modules: dict[str, object] = {}

    def load(ref: str) -> object:
        file, sep, name = ref.rpartition(":")
        where = f"{loaded.shown}:{loaded.line}: case '{loaded.case.name}'"
        if not sep or not file.endswith(".py"):
            raise CaseProblem(f"{where}: {ref!r} is not FILE.py:NAME")
        if file not in modules:
            path = copy / file
            if not is_confined(copy, copy, file) or not path.is_file():
                raise CaseProblem(f"{where}: {file} is not a file of the project")
            spec = importlib.util.spec_from_file_location(f"llm_do_case_{len(modules)}_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[file] = module
        value = getattr(modules[file], name, None)
        if value is None:
            raise CaseProblem(f"{where}: {file} has no {name}")
        return value

    return load
