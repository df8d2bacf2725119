"""spec/ stays true to the code.

- The generated files (spec/diagnostics.md, the JSON Schemas in runtime/llm_do/cli/schemas/) are what spec/generate.py
  renders from the code now, and its --check mode notices when they are not.
- Every diagnostic code, every key of project.json and of the front matter (with its default),
  every field of the bundle, every `.agent`-era alias and removed key, every model provider the
  compiler knows is documented, and the documents name nothing the code does not have.
- Links between the spec documents lead somewhere.
- The examples' and the conformance cases' project.json and front matter are valid (with
  `jsonschema`, when installed, against the generated schemas too).
"""

from __future__ import annotations

import importlib.util
import json
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel

from llm_do.bundle import model as bundle_model
from llm_do.bundle.names import KNOWN_PROVIDERS, RENAMED_PROVIDERS
from llm_do.compiler.codes import RULES
from llm_do.compiler.legacy import upgrade as legacy
from llm_do.compiler.syntax.front_matter import (
    AttachmentPolicy,
    ServerSideTool,
    ToolsetRef,
    WorkerFrontMatter,
    split_front_matter,
)
from llm_do.compiler.syntax.manifest import (
    CostSettings,
    DeclaredPrice,
    Defaults,
    Entry,
    FlowAcceptance,
    Flows,
    McpServer,
    ProjectManifest,
    RuntimeSettings,
)

try:  # not a dependency: used when present, the pydantic models otherwise
    import jsonschema
except ImportError:
    jsonschema = None

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "spec"


def _load_generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("llm_do_spec_generate", SPEC / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generator()


def _doc(name: str) -> str:
    return (SPEC / name).read_text(encoding="utf-8")


def _section(text: str, heading: str, *, own: bool = False) -> str:
    """The text under `heading` (a whole heading line), up to the next heading of its level or
    higher; with `own`, up to the next heading of any level (the section without subsections)."""
    lines = text.split("\n")
    try:
        start = lines.index(heading)
    except ValueError:
        raise AssertionError(f"no heading {heading!r}") from None
    level = len(heading) - len(heading.lstrip("#"))

    def ends(line: str) -> bool:
        depth = len(line) - len(line.lstrip("#"))
        return bool(re.match(r"#{1,6} ", line)) and (own or depth <= level)

    end = next((i for i in range(start + 1, len(lines)) if ends(lines[i])), len(lines))
    return "\n".join(lines[start + 1:end])


def _table_keys(section: str) -> list[str]:
    """The first-column names of the table rows of a section: `| `key` | ... |`."""
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def _row(section: str, key: str) -> str:
    match = re.search(rf"^\| `{re.escape(key)}` \|.*$", section, re.M)
    assert match, f"no table row for `{key}`"
    return match.group(0)


# --- generated files


def test_generated_files_are_current() -> None:
    stale = [p.relative_to(REPO).as_posix() for p in generate.stale_files()]
    assert not stale, f"{stale} are stale: run `python spec/generate.py`"


def test_generate_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    assert generate.main(["--check"]) == 1  # nothing generated yet
    assert generate.main([]) == 0
    assert generate.main(["--check"]) == 0
    first = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert generate.main([]) == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == first, "regeneration is byte-stable"
    schema = tmp_path / generate.SCHEMAS_DIR / "worker.schema.json"
    schema.write_text(schema.read_text().replace('"recursive"', '"recursiv"'))
    assert generate.main(["--check"]) == 1


@pytest.mark.parametrize("name", ["project", "worker", "bundle"])
def test_schema_files_are_json_schema_2020_12_in_canonical_form(name: str) -> None:
    text = (REPO / generate.SCHEMAS_DIR / f"{name}.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert text == json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(schema)


def test_diagnostics_md_documents_every_code() -> None:
    text = _doc("diagnostics.md")
    assert text.startswith("<!-- GENERATED by spec/generate.py")
    table = re.findall(r"^\| \[([A-Z]\d{3})\]\(#[a-z]\d{3}\) \| `([^`]+)` \| (\w+) \|", text, re.M)
    assert table == [(r.code, r.name, r.severity) for r in sorted(RULES.values(), key=lambda r: (
        list(generate.CATEGORIES).index(r.code[0]), r.code))]
    for rule in RULES.values():
        section = _section(text, f"### {rule.code}")
        assert f"**{rule.name}** ({rule.severity}). {rule.summary}" in section
        assert rule.explanation in section


# --- the language: project.json and front matter

SECTIONS: dict[type[BaseModel], tuple[str, str]] = {
    ProjectManifest: ("language.md", "## project.json"),
    Entry: ("language.md", "### `entry`"),
    RuntimeSettings: ("language.md", "### `runtime`"),
    Defaults: ("language.md", "### `defaults`"),
    McpServer: ("language.md", "### `mcp_servers`"),
    WorkerFrontMatter: ("language.md", "### Front matter keys"),
    AttachmentPolicy: ("language.md", "### `attachments`"),
    ServerSideTool: ("language.md", "### `server_side_tools`"),
    Flows: ("language.md", "### `flows`"),
    FlowAcceptance: ("language.md", "#### Accepting a flow"),
    CostSettings: ("language.md", "### `cost`"),
    DeclaredPrice: ("language.md", "#### Declared prices"),
}
"""Where each model's keys are documented as table rows."""

PROSE: dict[str, tuple[str, str]] = {
    "UsageLimitsSettings": ("language.md", "### `runtime`"),
}
"""Models whose keys are documented in a sentence rather than a table."""

NOT_KEYS = {ToolsetRef}
"""Models that are not written as mappings: a toolsets item is a name or a one-key mapping."""


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, dict, typing.Annotated):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def _all_models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []
    todo = [root]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.append(model)
        for field in model.model_fields.values():
            todo.extend(_models_in(field.annotation))
    return seen


EFFECTIVE_DEFAULTS = {
    (WorkerFrontMatter, "name"): "the file stem",
    (Entry, "worker"): '`"main"`',
}
"""Keys whose null default stands for a value the compiler fills in."""


def _default_text(model: type[BaseModel], name: str, field: Any) -> str | None:
    """How a field's default is written in the spec's tables, when it is a plain value."""
    if (model, name) in EFFECTIVE_DEFAULTS:
        return EFFECTIVE_DEFAULTS[model, name]
    if field.is_required():
        return "required"
    if field.default_factory is list:
        return "`[]`"
    if field.default_factory is dict:
        return "`{}`"
    if field.default_factory is not None:
        return None
    return f"`{json.dumps(field.default)}`" if field.default is not None else "null"


@pytest.mark.parametrize("root", [ProjectManifest, WorkerFrontMatter], ids=lambda m: m.__name__)
def test_every_key_is_documented_with_its_default(root: type[BaseModel]) -> None:
    for model in _all_models(root):
        if model in NOT_KEYS:
            continue
        if model.__name__ in PROSE:
            doc, heading = PROSE[model.__name__]
            section = _section(_doc(doc), heading)
            missing = [f for f in model.model_fields if f"`{f}`" not in section]
            assert not missing, f"{doc} {heading} does not name {model.__name__} keys {missing}"
            continue
        assert model in SECTIONS, f"{model.__name__} has keys but no section of the spec is mapped to it"
        doc, heading = SECTIONS[model]
        section = _section(_doc(doc), heading, own=True)
        assert sorted(_table_keys(section)) == sorted(model.model_fields), f"the table of {heading} lists other keys"
        for name, field in model.model_fields.items():
            default = _default_text(model, name, field)
            if default is not None:
                assert default in _row(section, name), f"{heading}: the row of `{name}` should say its default {default}"
            literal = field.annotation
            if typing.get_origin(literal) is Literal:
                for value in typing.get_args(literal):
                    assert json.dumps(value) in _row(section, name), f"{heading}: `{name}` value {value!r} undocumented"


def test_every_model_provider_is_listed() -> None:
    section = _section(_doc("language.md"), "## Models")
    missing = sorted(p for p in KNOWN_PROVIDERS if f"`{p}`" not in section)
    assert not missing, f"language.md#models does not list the providers {missing}"
    listed = set(re.findall(r"`([a-z0-9-]+)`", section.split("The known providers are:")[1].split("\n\n")[1]))
    assert listed == set(KNOWN_PROVIDERS), f"listed but unknown to the compiler: {sorted(listed - set(KNOWN_PROVIDERS))}"
    flat = " ".join(section.split())
    for old, new in RENAMED_PROVIDERS.items():
        assert f"`{old}` → `{new}`" in flat, f"language.md#models should say that `{old}` is now `{new}`"


# --- the bundle

BUNDLE_SECTIONS: dict[str, str] = {
    "Bundle": "## Top-level fields",
    "CompilerInfo": "## Top-level fields",
    "EntryNode": "## Top-level fields",
    "EntryFunctionNode": "### The entry function",
    "RuntimeNode": "## Top-level fields",
    "UsageLimitsNode": "## Top-level fields",
    "DefaultsNode": "## Top-level fields",
    "SourceEntry": "### `sources`",
    "ToolsetNode": "### `toolsets`",
    "McpConnection": "### `toolsets`",
    "ToolNode": "### Tool nodes",
    "CodeNode": "### Code",
    "CodePart": "### Code",
    "WorkerNode": "### `workers`",
    "WorkerToolset": "### `workers`",
    "WorkerTool": "### `workers`",
    "SchemaNode": "### `workers`",
    "AttachmentPolicyNode": "### `workers`",
    "RuleNode": "### `workers`",
    "ConditionAll": "### `workers`",
    "ConditionNot": "### `workers`",
    "ConditionTest": "### `workers`",
    "CapabilityGrant": "### Capabilities",
    "FlowsNode": "### Information flow",
    "FlowAcceptanceNode": "### Information flow",
    "CostNode": "### Cost",
    "DeclaredPriceNode": "### Cost",
}
TABLE_MODELS = {"Bundle", "ToolsetNode", "ToolNode", "WorkerNode", "EntryFunctionNode"}
"""Models documented by a table of their own: its rows are exactly their fields."""


def _typed_dicts(root: type) -> list[type]:
    """`root` and every TypedDict its keys reach, through unions and containers."""
    seen: list[type] = []
    todo = [root]
    while todo:
        node = todo.pop()
        if typing.is_typeddict(node):
            if node in seen:
                continue
            seen.append(node)
            todo.extend(typing.get_type_hints(node).values())
        else:
            todo.extend(typing.get_args(node))
    return seen


def test_every_bundle_field_is_documented() -> None:
    text = _doc("bundle.md")
    models = _typed_dicts(bundle_model.Bundle)
    assert sorted(m.__name__ for m in models) == sorted(BUNDLE_SECTIONS), "map every bundle model to a section"
    for model in models:
        section = _section(text, BUNDLE_SECTIONS[model.__name__], own=True)
        hints = typing.get_type_hints(model)
        names = list(hints)
        missing = [n for n in names if f"`{n}`" not in section and f'"{n}"' not in section]
        assert not missing, f"bundle.md {BUNDLE_SECTIONS[model.__name__]} does not name {model.__name__}.{missing}"
        if model.__name__ in TABLE_MODELS:
            assert sorted(_table_keys(section)) == sorted(names), f"the table of {model.__name__} lists other fields"
        for name, annotation in hints.items():
            for arg in [annotation, *typing.get_args(annotation)]:
                if typing.get_origin(arg) is Literal:
                    undocumented = [v for v in typing.get_args(arg) if f"`{v}`" not in section and f'"{v}"' not in section]
                    assert not undocumented, f"{model.__name__}.{name}: values {undocumented} not in bundle.md"


def test_bundle_md_states_the_format_constants() -> None:
    from llm_do.bundle.format import BUNDLE_FORMAT, GENERATED_KEY, GENERATED_NOTICE

    text = _doc("bundle.md")
    assert f"bundle format **{BUNDLE_FORMAT}**" in text
    assert f"## `{GENERATED_KEY}`" in text
    assert " ".join(GENERATED_NOTICE.split()) in " ".join(text.replace("> ", "").split())


# --- the .agent era


def test_every_alias_and_removed_key_is_in_legacy_md() -> None:
    text = _doc("legacy.md")
    aliases = _section(text, "## Aliases")
    for path, new in {**legacy.MANIFEST_ALIASES, **legacy.FRONT_MATTER_ALIASES}.items():
        old_key, new_key = ".".join(path), ".".join((*path[:-1], new))
        assert re.search(rf"^\|[^|]+\| `{re.escape(old_key)}` \| `{re.escape(new_key)}` \|$", aliases, re.M), old_key
    removed_section = _section(text, "## Keys with no equivalent")
    removed = {**{("project.json", p): h for p, h in legacy.MANIFEST_REMOVED.items()},
               **{("front matter of `.agent` files", p): h for p, h in legacy.FRONT_MATTER_REMOVED.items()}}
    rows = re.findall(r"^\| ([^|]+?) \| `([^`]+)` \| (.+) \|$", removed_section, re.M)
    assert sorted(rows) == sorted((where, ".".join(p), hint) for (where, p), hint in removed.items())
    assert f"`{legacy.LEGACY_WORKER_SUFFIX}`" in text


def test_every_key_set_to_what_llm_do_does_anyway_is_in_legacy_md() -> None:
    section = _section(_doc("legacy.md"), "## Keys set to what llm-do does anyway")
    rows = re.findall(r"^\| project\.json \| `([^`]+)` \| `([^`]+)` \| (.+) \|$", section, re.M)
    assert sorted(rows) == sorted((".".join(p), json.dumps(v), why) for p, (v, why) in legacy.MANIFEST_ALREADY.items())
    assert set(legacy.MANIFEST_ALREADY) <= set(legacy.MANIFEST_REMOVED)


# --- links between the documents


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.lstrip("#").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(line) for line in path.read_text(encoding="utf-8").split("\n") if re.match(r"#{1,6} ", line)}


def test_links_between_spec_documents_resolve() -> None:
    documents = sorted(SPEC.rglob("*.md"))
    problems = []
    for doc in documents:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (doc.parent / file).resolve() if file else doc
            if not path.exists():
                problems.append(f"{doc.name}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                problems.append(f"{doc.name}: {target} (no such heading)")
    assert not problems, "\n".join(problems)


def test_codes_named_in_the_spec_exist() -> None:
    for doc in sorted(SPEC.glob("*.md")):
        named = set(re.findall(r"diagnostics\.md#([a-z]\d{3})", doc.read_text(encoding="utf-8")))
        unknown = sorted(c for c in named if c.upper() not in RULES)
        assert not unknown, f"{doc.name} links to codes that do not exist: {unknown}"


# --- the examples and the conformance cases are valid documents


def _documents() -> list[tuple[str, str, Any]]:
    """(kind, path, data) for every project.json and .worker front matter of the examples and of
    the conformance cases that build; projects of the `.agent` era (legacy.md) are left out."""
    roots = [p for p in sorted((REPO / "examples").glob("*")) if p.is_dir()]
    for case in sorted((SPEC / "conformance").iterdir()):
        if case.is_dir() and json.loads((case / "expected.json").read_text()).get("builds"):
            roots.append(case)
    roots = [r for r in roots if not any(r.rglob("*.agent"))]
    out: list[tuple[str, str, Any]] = []
    for root in roots:
        manifest = root / "project.json"
        if manifest.is_file():
            out.append(("project", manifest.relative_to(REPO).as_posix(), json.loads(manifest.read_text(encoding="utf-8-sig"))))
        for path in sorted(root.rglob("*.worker")):
            if any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            split = split_front_matter(path.read_text(encoding="utf-8-sig").replace("\r\n", "\n"))
            assert isinstance(split, tuple), f"{path}: {split}"
            out.append(("worker", path.relative_to(REPO).as_posix(), yaml.safe_load(split[0]) or {}))
    return out


DOCUMENTS = _documents()


def test_there_are_documents_to_validate() -> None:
    kinds = {kind for kind, _, _ in DOCUMENTS}
    assert kinds == {"project", "worker"}


@pytest.mark.parametrize("kind,path,data", DOCUMENTS, ids=[p for _, p, _ in DOCUMENTS])
def test_examples_and_cases_validate(kind: str, path: str, data: Any) -> None:
    model = ProjectManifest if kind == "project" else WorkerFrontMatter
    model.model_validate(data)
    if jsonschema is not None:
        schema = json.loads((REPO / generate.SCHEMAS_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("kind,data", [
    ("project", {"version": 1, "worker_fils": []}),
    ("project", {"version": 2}),
    ("worker", {"toolsets": [{"a": {}, "b": {}}]}),
    ("worker", {"name": "has space"}),
])
def test_the_models_behind_the_schemas_refuse_what_the_spec_refuses(kind: str, data: Any) -> None:
    from pydantic import ValidationError

    model = ProjectManifest if kind == "project" else WorkerFrontMatter
    with pytest.raises(ValidationError):
        model.model_validate(data)
    if jsonschema is not None:
        schema = json.loads((REPO / generate.SCHEMAS_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
        assert not jsonschema.Draft202012Validator(schema).is_valid(data)


# --- the runtime

def test_every_event_config_field_and_script_key_is_in_runtime_md() -> None:
    import dataclasses

    from llm_do.runtime import events
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.script import ScriptToolCall, ScriptTurn

    text = (SPEC / "runtime.md").read_text(encoding="utf-8")
    kinds = [c for c in vars(events).values() if isinstance(c, type) and issubclass(c, events.RuntimeEvent) and c is not events.RuntimeEvent]
    assert kinds
    shared = {f.name for f in dataclasses.fields(events.RuntimeEvent)}  # every kind's (`call`): said once
    stream = text.split("## The event stream", 1)[1].split("\n## ", 1)[0]
    for name in shared:
        assert f"`{name}`" in stream, f"the events' field {name} is not documented"
    for kind in kinds:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{kind.kind}` |")), None)
        assert row is not None, f"event {kind.kind} is not documented"
        for f in dataclasses.fields(kind):
            if not f.name.startswith("_") and f.name not in shared:
                assert f"`{f.name}`" in row, f"field {f.name} of {kind.kind} is not documented"
    for f in dataclasses.fields(RuntimeConfig):
        assert f"`{f.name}`" in text, f"RuntimeConfig.{f.name} is not documented"
    for key in [*ScriptTurn.model_fields, *ScriptToolCall.model_fields]:
        assert f"`{key}`" in text or f'"{key}"' in text, f"script key {key} is not documented"
