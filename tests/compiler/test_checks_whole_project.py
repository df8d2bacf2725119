"""Whole projects: one that uses every feature correctly lints clean (no false positives), and one
lint reports many independent problems at once (the stages after a failed one still run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import write_project
from tests.support.lint import assert_exit_matches, lint

EVERYTHING = {
    "project.json": {
        "version": 1,
        "name": "everything",
        "worker_files": ["main.worker", "workers/**/*.worker"],
        "python_files": ["tools.py"],
        "entry": {"worker": "main", "args": {"topic": "tides", "depth": 2}},
        # main (1) -> planner (2) -> critic (3) -> planner: the deepest call starts at depth 3 < 4.
        "runtime": {"max_depth": 4, "approval_mode": "approve_all",
                    "usage_limits": {"request_limit": 20, "total_tokens_limit": 10000}},
        "defaults": {"model": "anthropic:claude-sonnet-4-5", "model_settings": {"temperature": 0.2}},
        "vars": {"team": "Research", "rules": ["cite sources", "be brief"], "style": {"tone": "plain"}},
        "suppress": ["G003", "R001", "Y007"],  # R001: `allow search` is meant; Y007: single files using its Python
        "flows": {"paths": {"notes": "published"},
                  "accept": [{"worker": "main", "private": ["*"], "untrusted": ["input", "provider:web_search"],
                              "egress": ["provider:web_search"], "reason": "the topic and the project's notes are public"}]},
    },
    "schemas.py": """
        from pydantic import BaseModel, Field
        from llm_do.runtime import WorkerArgs


        class Topic(WorkerArgs):
            topic: str
            depth: int = 1

            def prompt_messages(self):
                return [f"{self.topic} (depth {self.depth})"]


        class Report(BaseModel):
            summary: str
            sources: list[str] = Field(default_factory=list)
        """,
    "tools.py": """
        from pydantic_ai import FunctionToolset

        from helpers import normalize


        def search(query: str) -> str:
            \"\"\"Search the notes.\"\"\"
            return normalize(query)


        def word_count(text: str) -> int:
            \"\"\"Count words.\"\"\"
            return len(text.split())


        def fetch(url: str) -> str:
            \"\"\"Fetch a page.\"\"\"
            return url


        TOOLS = {"search": search, "word_count": word_count}
        TOOLSETS = {"web": FunctionToolset([fetch])}
        """,
    "helpers.py": "def normalize(text: str) -> str:\n    return text.strip()\n",
    "prompts/macros.md": "{% macro bullet(text) %}- {{ text }}{% endmacro %}\n",
    "prompts/header.md": "Team {{ team }}, tone {{ style.tone }}.\n",
    "notes/glossary.txt": "tide: the rise and fall of the sea\n",
    "main.worker": """
        ---
        name: main
        description: Writes a short report.
        compatible_models: ["anthropic:*", "openai:gpt-4o*"]
        model_settings: {temperature: 0.1}
        schema_in_ref: schemas.py:Topic
        schema_out_ref: schemas.py:Report
        toolsets:
          - filesystem_project_ro: {path: notes, allowed_suffixes: [".txt"]}
          - shell_readonly: {timeout: 10}
          - web
          - researcher
          - planner
        tools: [search, word_count]
        approvals:
          - allow search
          - ask web
          - ask researcher
          - deny filesystem_project_ro(path ~ '**/secret*' or max_chars > 50000)
          - ask word_*
          - allow shell
        attachments: {max_count: 2, max_total_bytes: 100000, allowed_suffixes: [".pdf"]}
        server_side_tools:
          - {tool_type: web_search, max_uses: 5}
        ---
        {% include 'prompts/header.md' %}
        {% from 'prompts/macros.md' import bullet %}
        {% for rule in rules %}{{ bullet(rule) }} ({{ loop.index }})
        {% endfor %}
        {% set extra = "Use the glossary." %}{{ extra | upper }}
        {{ file('notes/glossary.txt') }}
        {# a comment #}
        {% raw %}Literal {{ braces }} stay.{% endraw %}
        """,
    "workers/researcher.worker": """
        ---
        model: openai:gpt-4o-mini
        recursive: true
        toolsets: [researcher, filesystem_project]
        approvals: [deny write_file]
        ---
        Research. Answer in JSON like {"a": 1}.
        """,
    "workers/deep/planner.worker": """
        ---
        schema_in_ref: llm_do.runtime.args:PromptInput
        recursive: true
        toolsets: [critic]
        ---
        Plan.
        """,
    "workers/deep/critic.worker": "---\nrecursive: true\nmodel: test\ntoolsets: [planner]\n---\nCriticize.\n",
    "workers/library.worker": "---\ntoolsets: [shell_file_ops]\n---\nNot called yet; G003 is suppressed.\n",
}


@pytest.mark.process
def test_project_using_every_feature_lints_clean(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, EVERYTHING))
    assert result.diagnostics == []
    assert result.exit_code == 0


def test_project_without_manifest_lints_clean(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "main.worker": "---\ntoolsets: [helper]\n---\nStart.\n",
        "sub/helper.worker": "---\nmodel: test\n---\nHelp.\n",
    })
    result = lint(root)
    assert result.diagnostics == []
    assert result.exit_code == 0


def test_one_lint_reports_independent_problems_from_every_stage(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": """
            {
              "version": 1,
              "worker_files": ["*.worker"],
              "vars": {"topic": "tides"},
              "runtime": {"max_depth": 2},
              "suppres": ["G003"]
            }
            """,
        "main.worker": """
            ---
            modle: test
            toolsets: [helpr, helper, filesystem_project_ro]
            approvals: [allow nothing_like_this]
            ---
            About {{ topc }}.
            """,
        "helper.worker": "---\ntoolsets: [leaf]\n---\n{% include 'missing.md' %}\n",
        "leaf.worker": "---\nmodel: opnai:gpt-4o\n---\nx\n",
        "broken.worker": "---\ndescription: a: b\n---\nx\n",
        "orphan.worker": "---\n---\nx\n",
    })
    result = lint(root)
    assert result.exit_code == 1
    result.expect("P005", "project.json", '"suppres"', suggests="suppress")  # load
    result.expect("P001", "broken.worker", line=2, column=15)  # parse: the second ":"
    result.expect("P005", "main.worker", "modle", suggests="model")  # parse, repaired
    result.expect("N003", "main.worker", "helpr", suggests="helper")  # resolve
    result.expect("A002", "main.worker", "nothing_like_this")  # resolve, at the target
    result.expect("G002", "helper.worker", "leaf")  # check
    result.expect("M001", "leaf.worker", "opnai:gpt-4o")  # check
    result.expect("G003", "orphan.worker", line=1, column=1)  # check
    result.expect("T002", "main.worker", "topc", suggests="topic")  # templates
    result.expect("T003", "helper.worker", "missing.md")  # templates
    assert len(result.diagnostics) == 10
    assert_exit_matches(result)
    assert [(d["file"], d["line"]) for d in result.diagnostics] == sorted(
        (d["file"], d["line"]) for d in result.diagnostics)
