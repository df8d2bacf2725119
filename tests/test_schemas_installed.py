"""The editor schemas ship in the package: each is where `importlib.resources` finds it (the wheel
carries `llm_do/cli/schemas/`), its `$id` a stable https URL, `llm-do schema NAME` prints it, and
every example's files and what `llm-do init` writes validate against these installed copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from llm_do.cli.schema_files import SCHEMA_URL, SCHEMAS, schema_file, schema_id, schema_text
from llm_do.compiler.syntax.front_matter import split_front_matter
from tests.support.cli import run_cli, write_project
from tests.support.lint import lint

REPO = Path(__file__).resolve().parents[1]


def installed(name: str) -> dict[str, Any]:
    return json.loads(schema_text(name))


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_is_installed_with_a_stable_https_id(name: str) -> None:
    schema = installed(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].startswith(SCHEMA_URL) and SCHEMA_URL.startswith("https://")
    version = schema["$id"].removeprefix(f"{SCHEMA_URL}{name}-").removesuffix(".schema.json")
    assert version.isdigit(), schema["$id"]  # NAME-VERSION: a new format is a new URL


def test_llm_do_schema_prints_the_installed_copies() -> None:
    listed = run_cli("schema")
    assert listed.exit_code == 0
    for name in SCHEMAS:
        assert run_cli("schema", name).stdout == schema_text(name)
        path = run_cli("schema", name, "--path").stdout.strip()
        assert Path(path).read_text(encoding="utf-8") == schema_text(name) and Path(path) == Path(str(schema_file(name)))
        assert any(line.split()[:2] == [name, schema_id(name)] for line in listed.stdout.splitlines()), listed.stdout
    unknown = run_cli("schema", "workr")
    assert unknown.exit_code == 2 and "'worker'" in unknown.stderr


def _example_documents() -> list[tuple[str, str, Any]]:
    """(schema, path, data): every example's project.json, .worker front matter, case file and
    cassette (an `.agent`-era project's manifest and agents are upgraded by migrate, not validated)."""
    out: list[tuple[str, str, Any]] = []
    for root in sorted(p for p in (REPO / "examples").iterdir() if p.is_dir()):
        legacy = any(root.rglob("*.agent"))
        if (root / "project.json").is_file() and not legacy:
            out.append(("project", root / "project.json", json.loads((root / "project.json").read_text(encoding="utf-8"))))
        for path in sorted(root.rglob("*.worker")):
            split = split_front_matter(path.read_text(encoding="utf-8").replace("\r\n", "\n"))
            assert isinstance(split, tuple), path
            out.append(("worker", path, yaml.safe_load(split[0]) or {}))
        for path in sorted(root.glob("tests/*.yaml")):
            out.append(("case", path, yaml.safe_load(path.read_text(encoding="utf-8"))))
        for path in sorted(root.glob("tests/cassettes/*.json")):
            out.append(("cassette", path, json.loads(path.read_text(encoding="utf-8"))))
    return [(kind, path.relative_to(REPO).as_posix(), data) for kind, path, data in out]


EXAMPLES = _example_documents()


def test_the_examples_have_every_kind_of_file() -> None:
    assert {kind for kind, _, _ in EXAMPLES} == {"project", "worker", "case", "cassette"}


@pytest.mark.parametrize(("kind", "path", "data"), EXAMPLES, ids=[path for _, path, _ in EXAMPLES])
def test_every_example_validates_against_the_installed_schema(kind: str, path: str, data: Any) -> None:
    jsonschema.validate(data, installed(kind), cls=jsonschema.Draft202012Validator)


def test_init_names_the_installed_schemas_in_the_files_it_writes(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    assert run_cli("init", root, "--worker", "helper").exit_code == 0
    manifest = json.loads((root / "project.json").read_text(encoding="utf-8"))
    assert manifest["$schema"] == schema_id("project")
    jsonschema.validate(manifest, installed("project"), cls=jsonschema.Draft202012Validator)
    for worker in (root / "main.worker", root / "workers" / "helper" / "worker.worker"):
        text = worker.read_text(encoding="utf-8")
        assert text.split("\n")[1] == f"# yaml-language-server: $schema={schema_id('worker')}"
        split = split_front_matter(text)
        assert isinstance(split, tuple)
        jsonschema.validate(yaml.safe_load(split[0]), installed("worker"), cls=jsonschema.Draft202012Validator)
    assert lint(root).diagnostics == []  # llm-do reads past `$schema` and the comment


def test_a_schema_key_that_is_not_a_url_is_p006_at_it(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"project.json": '{\n  "$schema": 7,\n  "version": 1,\n  "worker_files": ["*.worker"]\n}\n',
                                    "main.worker": "---\n---\nx\n"})
    found = lint(root)
    found.expect("P006", "project.json", "7,", mentions=("$schema",))
    assert found.codes() == ["P006"]
    assert not jsonschema.Draft202012Validator(installed("project")).is_valid({"$schema": 7, "version": 1})
