"""The case format: `tests/*.yaml` of a project, each a list of cases under `cases:`. Parsed with
positions, so every mistake is reported at its file and line (`CaseProblem`, exit 2), a path that
leads outside the project included (`case_paths`); the JSON Schema in
runtime/llm_do/cli/schemas/case.schema.json is generated from these models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from llm_do.bundle.errors import InputProblem
from llm_do.bundle.regular_files import read_regular_file

from .case_paths import is_confined
from .evals import EvaluatorSpec

CASES_DIR = "tests"


class CaseProblem(InputProblem):
    """A case file that cannot be used (exit 2), with its file and line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OutputExpectation(_Strict):
    """Checks on the run's output (the last turn's, in a chat)."""

    equals: object = None
    """The output, exactly (text, or the JSON of a structured output)."""
    contains: str | list[str] | None = None
    """Text the output (as text, or its JSON) contains; a list: each of them."""
    schema_ref: str | None = Field(default=None, alias="schema")
    """`FILE:CLASS` of a pydantic model in the project that the output must validate against."""
    predicate: str | None = None
    """`FILE:FUNCTION` in the project, called with the output; a false result or an exception fails."""


class CallsExpectation(_Strict):
    """Tool and worker calls the run made. Each item is written like an approval rule's target and
    condition: `write_file`, `write_file(path ~ 'out/**')`, `ticket_classifier(customer_plan == 'pro')`;
    `WORKER: ITEM` only counts calls made by WORKER."""

    in_order: list[str] = Field(default_factory=list)
    """Calls made in this order (others may come between)."""
    any_order: list[str] = Field(default_factory=list)
    """Calls made, in any order."""
    never: list[str] = Field(default_factory=list)
    """Calls never made."""


class ApprovalsExpectation(_Strict):
    """Tools whose calls were asked for approval, denied, or sent back for revision."""

    asked: list[str] = Field(default_factory=list)
    denied: list[str] = Field(default_factory=list)
    revised: list[str] = Field(default_factory=list)


class LimitsExpectation(_Strict):
    """The most the run (all its turns) may use."""

    requests: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: int | None = None


class Expectations(_Strict):
    output: OutputExpectation | None = None
    calls: CallsExpectation | None = None
    approvals: ApprovalsExpectation | None = None
    limits: LimitsExpectation | None = None
    fails: str | None = None
    """The run is expected to fail, with this text in its one-line error."""


class Case(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    worker: str | None = None
    """The worker to run; default: the entry."""
    input: str | dict[str, Any] | None = None
    """A prompt, or the worker's arguments; default: the bundle's entry.args."""
    chat: list[str] | None = None
    """Instead of `input`: user turns of a conversation with the worker."""
    cassette: str | None = None
    """The model's turns from this cassette (relative to the case file)."""
    script: str | None = None
    """Or from this script (`--script` format, relative to the case file)."""
    approvals: Literal["recorded", "approve_all", "reject_all"] | None = None
    """How asked calls are answered: as recorded in the cassette (the default with one), or all
    approved, or all rejected (the default otherwise)."""
    expect: Expectations = Field(default_factory=Expectations)
    repeat: int = Field(default=1, ge=1, le=100)
    """With --live: run the case this many times (a replay is deterministic: it runs once)."""
    evaluators: list[EvaluatorSpec] = Field(default_factory=list)
    """With --live: scores of each run (`contains`, `equals`, an LLM `judge` with a rubric)."""
    pass_rate: float = Field(default=1.0, ge=0, le=1)
    """With --live: the share of runs that must pass (their expectations and every evaluator)."""

    @model_validator(mode="after")
    def _one_source(self) -> Case:
        if self.cassette is not None and self.script is not None:
            raise ValueError("a case takes its model turns from a cassette or a script, not both")
        if self.input is not None and self.chat is not None:
            raise ValueError("a case gives an input or a chat, not both")
        if self.approvals == "recorded" and self.cassette is None:
            raise ValueError("approvals: recorded needs a cassette")
        return self


class CaseFile(_Strict):
    cases: list[Case]


class LoadedCase:
    """A case with where it was written."""

    def __init__(self, case: Case, file: Path, shown: str, line: int) -> None:
        self.case = case
        self.file = file
        self.shown = shown
        """The file as reports name it (relative to the project)."""
        self.line = line

    def beside(self, relative: str) -> Path:
        return self.file.parent / relative


def case_files(root: Path) -> list[Path]:
    folder = root / CASES_DIR
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []


def load_case_file(path: Path, root: Path) -> list[LoadedCase]:
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        text = read_regular_file(path).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseProblem(f"{shown}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    data, lines = _with_lines(text, shown)
    try:
        parsed = CaseFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        line = _nearest_line(lines, loc)
        where = ".".join(str(p) for p in loc)
        raise CaseProblem(f"{shown}:{line}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    names: dict[str, int] = {}
    out = []
    for index, case in enumerate(parsed.cases):
        line = lines.get(("cases", index), 1)
        if case.name in names:
            raise CaseProblem(f"{shown}:{line}: case '{case.name}' is defined twice (first at line {names[case.name]})")
        names[case.name] = line
        found = _outside(case, path, root)
        if found is not None:
            keys, problem = found
            raise CaseProblem(f"{shown}:{_nearest_line(lines, ('cases', index, *keys))}: case '{case.name}': {problem}")
        out.append(LoadedCase(case, path, shown, line))
    return out


def _with_lines(text: str, shown: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The YAML document as data, and the line of every mapping value and list item by its path."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise CaseProblem(f"{shown}:{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    lines: dict[tuple[Any, ...], int] = {}
    scalars = yaml.constructor.SafeConstructor()

    def walk(node: yaml.Node, path: tuple[object, ...]) -> object:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            return {walk(k, (*path, "<key>")): walk(v, (*path, k.value)) for k, v in node.value}
        if isinstance(node, yaml.SequenceNode):
            return [walk(item, (*path, i)) for i, item in enumerate(node.value)]
        return scalars.construct_object(node, deep=True)  # a scalar, typed as YAML types it

    if node is None:
        raise CaseProblem(f"{shown}:1: empty: a case file holds `cases:`, a list of cases")
    try:
        return walk(node, ()), lines
    except yaml.YAMLError as exc:  # a scalar YAML cannot type (a bad timestamp, say)
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise CaseProblem(f"{shown}:{line}: {getattr(exc, 'problem', None) or exc}") from None


def _nearest_line(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def _named_paths(case: Case) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(where in the case, as a key path; what it is; the path as written) of each path the case
    names; `what` is `case` for paths relative to the case file, `project` for the others."""
    for key in ("cassette", "script"):
        written = getattr(case, key)
        if written is not None:
            yield (key,), "case", written
    output = case.expect.output
    if output is not None:
        for key, ref in (("schema", output.schema_ref), ("predicate", output.predicate)):
            if ref is not None:
                yield ("expect", "output", key), "project", ref.rpartition(":")[0] or ref
    if isinstance(case.input, dict) and isinstance(case.input.get("attachments"), list):
        for index, item in enumerate(case.input["attachments"]):
            if isinstance(item, str):
                yield ("input", "attachments", index), "project", item


def _outside(case: Case, file: Path, root: Path) -> tuple[tuple[Any, ...], str] | None:
    """The first path of `case` (in the case file `file`) outside the project at `root`: where it is
    in the case (a key path) and what is wrong with it; None when all are inside."""
    for keys, relative_to, written in _named_paths(case):
        base = file.parent if relative_to == "case" else root
        if not is_confined(root, base, written):
            said = "relative to the case file" if relative_to == "case" else "relative to the project"
            return keys, (f"{'.'.join(map(str, keys))}: {written!r} is not a file of the project (a case names files "
                          f"inside it, {said})")
    return None
