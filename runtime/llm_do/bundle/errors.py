"""The root of llm-do's errors and the middle classes every package raises under. Standard library
only, at the bottom of the import graph, so the compiler, the runtime, the toolkit and the stdlib
all derive their errors from here (tests/bundle/test_errors.py checks that every one does).

    LlmDoError                      every error llm-do raises on purpose; its message is one line
    ├── InputProblem                what a user gave cannot be used: the CLI says so, exit 2
    ├── Refused                     llm-do will not do it, by policy; the message says why
    │   ├── BundleRefused           a bundle the runtime will not run: exit 3
    │   └── PathRefused, CommandRefused, CallRefused   a path, a command line, a worker call
    ├── RunFailed                   a run that could not finish: exit 1 (llm_do.runtime.errors)
    ├── ToolCallFailed              a tool call the model is told failed (llm_do.runtime.errors)
    └── the rest: a problem one module reports and its caller turns into a diagnostic or one of the above

Names follow one rule. `*Problem`: something a person, a model or a project gave llm-do cannot be
used (an input, a file, a definition, a setting); the message says what to fix. `*Refused`: llm-do
could do it but will not (a bundle, a path, a command, a call). `*Failed`: something that ran did
not finish (a run, a tool call). `*Error` names only the root (`LlmDoError`) and the CLI's one error
type (`CliError`). Other names say what happened (`ProjectNotFound`, `UnknownReference`). Where code
relies on `except ValueError` (or `OSError`, `ImportError`), the class derives from that as well.
"""

from __future__ import annotations

REBUILD = "run `llm-do build`"
"""What every refusal of a bundle tells the user to do."""


class LlmDoError(Exception):
    """The root of every error llm-do raises on purpose."""


class InputProblem(LlmDoError):
    """What a user gave (a run's input, an inputs or script file, a path, a DB URL) cannot be used:
    a usage error, one line on the command line and exit 2."""


class Refused(LlmDoError):
    """Something llm-do will not do, by policy; the message says why (to a user or a model)."""


class BundleRefused(Refused):
    """The bundle cannot be run as it is; the message is one line saying why and what to do (exit 3).
    It is apart from the loader (`llm_do.runtime.bundle`) so that the reader (`reader.verify`), the
    loader and the import hook (`verified_imports`) can raise it without importing each other."""


def innermost(exc: BaseException) -> BaseException:
    """The error an exception group (pydantic-ai's and anyio's task groups make them) was raised for."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
