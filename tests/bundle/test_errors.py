"""One exception hierarchy: every exception class llm-do defines derives from `LlmDoError`
(llm_do/bundle/errors.py), and its name follows the rule written there."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import llm_do
from llm_do.bundle.errors import BundleRefused, InputProblem, LlmDoError, Refused

PRIVATE_SIGNALS = {
    "llm_do.compiler.syntax.json_reading._Refused":
        "unwinds the JSON reader to the one place that turns it into a JsonProblem; never leaves the module",
    "llm_do.compiler.syntax.yaml_positions._Limit":
        "unwinds the YAML loader when a document passes a size limit; caught in the same module",
}
"""Exceptions that are control flow inside one module, not errors llm-do raises, with the reason."""

SUFFIXES = ("Problem", "Refused", "Failed")


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of llm_do, by its dotted name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(llm_do.__path__, "llm_do."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{value.__qualname__}"] = value
    return found


def test_every_exception_derives_from_llm_do_error() -> None:
    classes = exception_classes()
    assert len(classes) > 40  # the walk found the packages of all three roots
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, LlmDoError) and name not in PRIVATE_SIGNALS)
    assert outside == []
    for name in PRIVATE_SIGNALS:  # the exceptions stay as listed: private, and still there
        assert name in classes and name.rsplit(".", 1)[1].startswith("_")


def test_names_follow_the_rule() -> None:
    """`*Error` is only the root and the CLI's error type; a `*Problem` is no refusal, a `*Refused` is one."""
    for name, cls in exception_classes().items():
        short = cls.__name__
        if short.endswith("Error"):
            assert name in ("llm_do.bundle.errors.LlmDoError", "llm_do.cli.errors.CliError"), name
        if short.endswith("Refused") and name not in PRIVATE_SIGNALS:
            assert issubclass(cls, Refused), name
        if short.endswith("Problem"):
            assert not issubclass(cls, Refused), name


def test_the_usage_problems_are_input_problems() -> None:
    """What the CLI ends with exit 2 without a handler of its own (cli/main.py)."""
    from llm_do.compiler.diff.inputs import BundleInputProblem
    from llm_do.compiler.stages.load import ProjectNotFound
    from llm_do.runtime.durable.db_url import DbUrlProblem
    from llm_do.runtime.durable.runs import RecordProblem
    from llm_do.runtime.script import ScriptProblem
    from llm_do.runtime.services import ServiceProblem

    for cls in (BundleInputProblem, ProjectNotFound, DbUrlProblem, RecordProblem, ScriptProblem, ServiceProblem):
        assert issubclass(cls, InputProblem), cls
    assert not issubclass(BundleRefused, InputProblem)


def test_value_errors_stay_value_errors() -> None:
    """Code (and users' tools) that catch ValueError keep catching these."""
    from pydantic_ai.exceptions import ToolFailed

    from llm_do.runtime.errors import CallRefused
    from llm_do.stdlib.shell.commands import CommandRefused
    from llm_do.stdlib.worker_create.definition import DefinitionProblem
    from llm_do.toolkit.files import PathRefused

    for cls in (CommandRefused, DefinitionProblem, PathRefused):
        assert issubclass(cls, ValueError) and issubclass(cls, Refused | LlmDoError)
    assert issubclass(CallRefused, ToolFailed) and issubclass(CallRefused, Refused)
    assert str(CallRefused("too deep")) == "too deep" and CallRefused("too deep").message == "too deep"
