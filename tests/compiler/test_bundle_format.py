"""The bundle.lock format: canonical JSON, digest, node hashes, sources, header; one full snapshot.

Hashes are recomputed here with hashlib and json, independently of llm_do.bundle.canonical.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from llm_do.bundle.format import BUNDLE_FORMAT
from llm_do.bundle.schema import validate as validate_bundle
from tests.support.cli import run_cli, worker, write_project

pytestmark = pytest.mark.process

# A small representative project: vars + include, schema_in_ref, stdlib toolset with settings,
# a Python tool (from tools.py, which imports a helper module), an approval rule, a declared
# recursive worker, a file() read, and a non-ASCII character.
PROJECT = {
    "project.json": {
        "version": 1,
        "name": "representative",
        "worker_files": ["*.worker"],
        "python_files": ["schemas.py", "tools.py"],
        "entry": {"worker": "main", "args": {"input": "Summarize the notes."}},
        "runtime": {"max_depth": 4, "approval_mode": "prompt"},
        "vars": {"team": "Plankton", "style": "brief"},
    },
    "main.worker": worker(
        """
        description: Entry point — routes the request
        model: test
        toolsets:
          - filesystem_project_ro: {max_read_bytes: 4096}
          - analyst
          - summarizer
        tools:
          - count_words
        approvals:
          - allow count_words
        """,
        'You work for team {{ team }}; keep answers {{ style }}.\n{% include "prompts/house_rules.j2" %}',
    ),
    "analyst.worker": worker(
        """
        description: Analyzes one topic
        schema_in_ref: schemas.py:AnalystInput
        """,
        'Analyze the topic.\nBackground: {{ file("data/background.txt") }}',
    ),
    "summarizer.worker": worker(
        """
        description: Summarizes recursively
        recursive: true
        toolsets: [summarizer]
        """,
        "Summarize; split long inputs and call yourself on the parts.",
    ),
    "prompts/house_rules.j2": "House rules: cite files by path.\n",
    "data/background.txt": "Tides follow the moon.\n",
    "wordsplit.py": '''
        def split_words(text):
            return text.split()
        ''',
    "schemas.py": '''
        from llm_do.runtime import WorkerArgs


        class AnalystInput(WorkerArgs):
            topic: str
            depth: int = 1

            def prompt_messages(self):
                return [f"{self.topic} (depth {self.depth})"]
        ''',
    "tools.py": '''
        from wordsplit import split_words


        def count_words(text: str) -> int:
            """Count the words of a text."""
            return len(split_words(text))


        TOOLS = {"count_words": count_words}
        ''',
}

EXPECTED_SOURCES = {
    "project.json": "manifest",
    "main.worker": "worker",
    "analyst.worker": "worker",
    "summarizer.worker": "worker",
    "schemas.py": "python",
    "tools.py": "python",
    "wordsplit.py": "python",
    "prompts/house_rules.j2": "template",
    "data/background.txt": "file",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = write_project(tmp_path_factory.mktemp("bundle") / "proj", PROJECT)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root, (root / "bundle.lock").read_bytes().decode("utf-8")


@pytest.fixture(scope="module")
def text(built: tuple[Path, str]) -> str:
    return built[1]


@pytest.fixture(scope="module")
def doc(text: str) -> dict[str, Any]:
    return json.loads(text)


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _compact(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def test_validates_against_the_bundle_model(text: str) -> None:
    bundle = validate_bundle(text)
    assert set(bundle["workers"]) == {"main", "analyst", "summarizer"}
    assert bundle["entry"]["worker"] == "main"
    assert bundle["runtime"]["max_depth"] == 4


def test_canonical_json(text: str, doc: dict[str, Any]) -> None:
    assert text.endswith("}\n") and not text.endswith("\n\n")
    # Sorted keys at every level, two-space indentation: re-serializing changes nothing.
    assert text in (
        json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n",
        json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True) + "\n",
    )
    assert "\t" not in text and "\r" not in text


def test_no_absolute_or_machine_specific_paths(built: tuple[Path, str]) -> None:
    root, text = built
    assert str(root) not in text
    assert str(root.parent) not in text
    assert str(Path.home()) not in text
    assert "/tmp" not in text
    assert "site-packages" not in text


def test_first_key_is_generated_notice(text: str, doc: dict[str, Any]) -> None:
    first_key = next(iter(json.loads(text, object_pairs_hook=lambda pairs: dict(pairs))))
    assert first_key == "@generated"
    assert text.splitlines()[1].startswith('  "@generated": ')
    notice = doc["@generated"]
    assert "llm-do build" in notice
    assert "merge conflict" in notice.lower()


def test_header(doc: dict[str, Any]) -> None:
    assert doc["bundle_format"] == BUNDLE_FORMAT
    assert isinstance(doc["bundle_format"], int)
    assert doc["compiler"] == {"name": "llm-do", "version": metadata.version("llm-do")}
    assert doc["root"] == "."
    assert doc["name"] == "representative"


def test_digest_is_sha256_of_file_with_digest_blanked(text: str, doc: dict[str, Any]) -> None:
    digest = doc["digest"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert text.count(digest) == 1
    blanked = text.replace(f'"digest": "{digest}"', '"digest": ""')
    assert _sha(blanked.encode("utf-8")) == digest


def _nodes(doc: dict[str, Any]):
    for name, node in doc["workers"].items():
        yield f"worker {name}", node
    for name, node in doc["toolsets"].items():
        yield f"toolset {name}", node
        for tool_name, tool in node["tools"].items():
            yield f"tool {name}.{tool_name}", tool


def test_every_node_hash_covers_its_compact_json(doc: dict[str, Any]) -> None:
    checked = 0
    for label, node in _nodes(doc):
        body = {k: v for k, v in node.items() if k != "hash"}
        assert node["hash"] == _sha(_compact(body)), label
        checked += 1
    # 3 workers, 2 toolsets (filesystem_project_ro, tools), their 3 tools
    assert checked == 8


def test_sources_list_every_input_with_its_hash(built: tuple[Path, str], doc: dict[str, Any]) -> None:
    root, _ = built
    sources = doc["sources"]
    assert {path: entry["kind"] for path, entry in sources.items()} == EXPECTED_SOURCES
    for path, entry in sources.items():
        assert entry["sha256"] == _sha((root / path).read_bytes()), path


def test_an_edit_changes_its_node_and_line_endings_change_nothing(tmp_path: Path, doc: dict[str, Any]) -> None:
    """analyst.worker edited by a word; summarizer.worker rewritten with a BOM and CRLF."""
    files = dict(PROJECT)
    files["analyst.worker"] = files["analyst.worker"].replace("Analyze the topic.", "Analyze the topic well.")
    root = write_project(tmp_path / "proj", files)
    raw = (root / "summarizer.worker").read_bytes()
    (root / "summarizer.worker").write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    assert run_cli("build", root).exit_code == 0
    changed = json.loads((root / "bundle.lock").read_text())
    assert changed["workers"]["analyst"]["hash"] != doc["workers"]["analyst"]["hash"]
    assert changed["workers"]["main"]["hash"] == doc["workers"]["main"]["hash"]
    assert changed["workers"]["summarizer"] == doc["workers"]["summarizer"]
    assert changed["toolsets"] == doc["toolsets"]
    assert changed["digest"] != doc["digest"]
    # Sources are hashed after normalization: the CRLF + BOM file hashes like the LF original.
    assert changed["sources"]["summarizer.worker"]["sha256"] == _sha(raw)
    assert changed["sources"]["analyst.worker"]["sha256"] == _sha((root / "analyst.worker").read_bytes())
    assert {k: v for k, v in changed["sources"].items() if k != "analyst.worker"} == {
        k: v for k, v in doc["sources"].items() if k != "analyst.worker"
    }


def test_worker_nodes_carry_what_the_runtime_needs(doc: dict[str, Any]) -> None:
    main = doc["workers"]["main"]
    assert main["instructions"] == (
        "You work for team Plankton; keep answers brief.\nHouse rules: cite files by path."
    )
    assert main["model"] == "test"
    assert main["calls"] == ["analyst", "summarizer"]
    assert main["tools"]["count_words"]["approval"] == "allow"
    assert main["tools"]["read_file"]["toolset"] == "filesystem_project_ro"
    fs = next(t for t in main["toolsets"] if t.get("toolset") == "filesystem_project_ro")
    assert fs["settings"] == {"max_read_bytes": 4096}
    analyst = doc["workers"]["analyst"]
    assert analyst["instructions"] == "Analyze the topic.\nBackground: Tides follow the moon."
    assert analyst["input"]["ref"] == "schemas.py:AnalystInput"
    assert set(analyst["input"]["json_schema"]["properties"]) == {"topic", "depth"}
    assert doc["workers"]["summarizer"]["recursive"] is True
    assert doc["workers"]["summarizer"]["calls"] == ["summarizer"]
    # Without the rule, a Python tool is asked by default.
    tools_node = next(n for n in doc["toolsets"].values() if n["kind"] == "python")
    assert tools_node["tools"]["count_words"]["approval"] == "ask"


def test_snapshot(text: str, snapshot) -> None:
    assert text == snapshot
