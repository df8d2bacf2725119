"""What the compiler's commands share: compiling with a bad path as a usage error, diagnostics on
the stderr console."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import usage_problem

if TYPE_CHECKING:
    from llm_do.compiler.facts.answers import McpServerFact
    from llm_do.compiler.pipeline import CompileResult
    from llm_do.compiler.report.diagnostics import ProjectDiagnostics


def compile_or_exit(path: Path, *, import_python: bool = True, emit_bundle: bool = True,
                    lock_dir: Path | None = None, cache: bool = True,
                    listed: Mapping[str, McpServerFact] | None = None, review: bool = False) -> CompileResult:
    """Compile, turning a path that names no project into a usage error (exit 2)."""
    from llm_do.compiler.pipeline import compile_project

    with usage_errors(path):
        return compile_project(path, import_python=import_python, emit_bundle=emit_bundle, lock_dir=lock_dir,
                               cache=cache, listed=listed, review=review)


@contextmanager
def usage_errors(path: Path) -> Iterator[None]:
    """A path that names no project, or a file of it that cannot be read, as a usage error (exit 2),
    never a traceback. `ProjectNotFound` is imported only when something was raised, so a build or
    lint answered from its record loads no stage."""
    try:
        yield
    except OSError as exc:
        raise usage_problem(f"{exc.filename or path}: {exc.strerror}") from None
    except Exception as exc:
        from llm_do.compiler.stages.load import ProjectNotFound

        if isinstance(exc, ProjectNotFound):
            raise usage_problem(str(exc)) from None
        raise


def as_report(project: str, result: CompileResult, files_as: str | None = None) -> ProjectDiagnostics:
    from llm_do.compiler.report.diagnostics import ProjectDiagnostics

    return ProjectDiagnostics(project, result.loaded.root, result.diagnostics, files_as)


def errors_only(reports: list[ProjectDiagnostics]) -> list[ProjectDiagnostics]:
    """The reports as `-q` shows them: their errors only."""
    from dataclasses import replace

    return [replace(r, diagnostics=[d for d in r.diagnostics if d.is_error]) for r in reports]


def print_diagnostics(reports: list[ProjectDiagnostics], *, summary: bool = True, quiet: bool = False) -> None:
    """Every diagnostic on stderr; `quiet` (`-q`): the errors only."""
    if quiet:
        reports = errors_only(reports)
    if any(r.diagnostics for r in reports):
        from llm_do.compiler.report.diagnostics.text import print_text  # rich only to style a terminal

        print_text(reports, show_summary=summary)
