"""The information-flow labels' defaults (spec/language.md, "flows"): pure functions, no project."""

from __future__ import annotations

import pytest

from llm_do.compiler.analysis.flows.labels import LabelPolicy, labels_of, policy_of, python_labels
from llm_do.compiler.code.effects import ENVIRONMENT, NETWORK, PROCESS, WRITE

NONE: frozenset[str] = frozenset()
P, U, E = "private", "untrusted", "egress"
FOLDERS = policy_of({"inbox/": "untrusted", "site": "published", "site/drafts": "private"}, {})


@pytest.mark.parametrize(("capability", "labels"), [
    ("fs.read:project/**", {P, U}),  # covers the inbox others fill
    ("fs.read:project/docs/**", {P}),
    ("fs.read:project/inbox/**/*.md", {U}),
    ("fs.read:project/site/**", {P}),  # published, but it covers site/drafts
    ("fs.read:project/site/css/**", NONE),
    ("fs.read:cwd/**", {P}),
    ("fs.read:/etc/**", {P}),
    ("fs.write:project/**", {E}),  # covers the published site
    ("fs.write:project/notes/**", NONE),
    ("fs.write:project/site/**", {E}),
    ("fs.write:project/site/drafts/**", NONE),
    ("fs.write:/tmp/**", {E}),
    ("net:api.example.com", {U, E}),
    ("egress:slack", {E}),
    ("private", {P}),
    ("provider:web_search", {U, E}),
    ("provider:code_execution", NONE),
    ("env:ANTHROPIC_API_KEY", NONE),
    ("call:helper", NONE),
    ("service:catalog", NONE),
])
def test_capability_labels(capability: str, labels: set[str]) -> None:
    assert labels_of(capability, FOLDERS) == labels


def test_a_process_is_egress_unless_the_stdlib_shell_runs_it() -> None:
    assert labels_of("proc.exec:cat,git,grep", LabelPolicy(), stdlib=True) == NONE
    assert labels_of("proc.exec:git", LabelPolicy()) == {U, E}


def test_mcp_tools_are_untrusted_egress_unless_said_otherwise_and_names_only_sharpen() -> None:
    policy = policy_of({}, {"docs": (["untrusted"], {"get_secret": ["private"]}), "gh": (None, {})})
    assert labels_of("mcp:gh:get_issue", policy) == {U, E}
    assert labels_of("mcp:docs:search", policy) == {U}
    assert labels_of("mcp:docs:send_feedback", policy) == {U, E}  # the name says it sends
    assert labels_of("mcp:docs:get_secret", policy) == {P}  # a tool's own labels replace everything
    assert labels_of("mcp:docs:*", policy) == {U}  # an opaque server: what the project says of it


def test_python_effects_label_an_undeclared_tool() -> None:
    assert python_labels([NETWORK]) == {U, E}
    assert python_labels([PROCESS]) == {U, E}
    assert python_labels([WRITE]) == {E}
    assert python_labels([ENVIRONMENT]) == NONE  # its own credentials: no leg
    assert python_labels([]) == NONE
    assert python_labels([], reads=True) == {P}
    assert python_labels([WRITE], unknown_calls=True) == {U, E}


# --- what undeclared code's calls count as, beyond the effects table (red team M3) ----------------

TOOLS = '''
import json
import logging.handlers
import webbrowser
from pathlib import Path

import boto3
import pydantic
import yaml
from pydantic_ai import Agent, ModelRetry
from slack_sdk import WebClient as Slack

from lib.store import save


def notify(text):
    Slack(token="x").chat_postMessage(channel="#team", text=text)
    boto3.client("sns").publish(Message=text)


def quiet(text):
    data = json.loads(text)
    model = pydantic.TypeAdapter(dict).validate_python(data)
    if not model:
        raise ModelRetry("empty")
    return yaml.safe_dump(model) + save(text)


def reads(path):
    return open(path).read() + Path(path).read_text()


def writes(path, text):
    with open(path, "w") as f:
        f.write(text)


def asks_a_model(text):
    return Agent("openai:gpt-4o").run_sync(text).output


def logs_out(text):
    logging.handlers.HTTPHandler("example.com", "/log")
    webbrowser.open("https://example.com/?q=" + text)
'''


@pytest.mark.parametrize(("tool", "reads", "unknown", "effects"), [
    ("notify", False, ["slack_sdk.WebClient", "boto3.client"], []),
    ("quiet", False, [], []),  # the standard library, no-I/O packages, pydantic-ai's exceptions, the project's own code
    ("reads", True, [], []),
    ("writes", False, [], ["fs.write"]),
    ("asks_a_model", False, ["pydantic_ai.Agent"], []),  # a model request carries what it is given
    ("logs_out", False, [], ["net"]),  # the standard library's senders are in the effects table
])
def test_undeclared_code_counts_reads_and_unknown_third_party_calls(tool: str, reads: bool, unknown: list[str],
                                                                    effects: list[str]) -> None:
    from llm_do.compiler.code.fingerprint import CodeIndex, trace_tool

    files = {"tools.py": TOOLS, "lib/__init__.py": "", "lib/store.py": "def save(text):\n    return text\n"}
    traced = trace_tool(CodeIndex(files.get), "tools.py", tool)
    assert traced is not None
    assert (traced.reads, [c.name for c in traced.unknown], traced.effects) == (reads, unknown, effects)
    if tool == "notify":  # where the lint points (R007): the first such call
        assert traced.unknown[0][1:] == ("tools.py", TOOLS.splitlines().index('    Slack(token="x").chat_postMessage('
                                                                             'channel="#team", text=text)') + 1, 5)
