"""Labels narrowed by approval rules: which conditions confine a file tool's unasked calls to
folders, and what that leaves of its labels (spec/language.md, "Labels")."""

from __future__ import annotations

import pytest

from llm_do.compiler.analysis.flows.labels import policy_of
from llm_do.compiler.analysis.flows.rule_confinement import allowed_folders, conditional_labels
from llm_do.compiler.approvals.grammar import parse_rule

POLICY = policy_of({"site": "published", "inbox": "untrusted"}, {})


def rules(*texts: str):
    return [parse_rule(text, i) for i, text in enumerate(texts)]


@pytest.mark.parametrize(("texts", "approval", "folders"), [
    (["allow write_file(path ~ 'drafts/**')"], "ask", ["drafts"]),
    (["allow write_file(path ~ 'drafts/*.md' or path == 'notes/index.md')"], "ask", ["drafts", "notes/index.md"]),
    (["allow write_file(path in ['a/x.md', 'b/y.md'])"], "ask", ["a/x.md", "b/y.md"]),
    (["allow write_file(path ~ 'drafts/**' or size < 10)"], "ask", None),  # `size` is no path: anywhere
    (["allow write_file(size < 10 and path ~ 'drafts/**')", "deny write_file(path ~ 'site/**')"], "ask", ["drafts"]),
    (["allow write_file(path ~ '**/*.md')"], "ask", ["."]),  # anywhere below the root
    (["allow write_file(not path ~ 'site/**')"], "ask", None),  # what `not` leaves may be anywhere
    (["allow write_file(path ~ '../site/**')"], "ask", None),
    (["allow write_file(path ~ 'drafts/**')"], "allow", None),  # the other calls are allowed too
    (["ask write_file(path ~ 'site/**')"], "ask", []),  # no call goes unasked
])
def test_which_conditions_confine_the_calls_they_allow(texts: list[str], approval: str, folders: list[str] | None) -> None:
    assert allowed_folders(rules(*texts), approval) == folders


def test_a_write_confined_away_from_the_published_folder_is_no_egress_unasked() -> None:
    write = frozenset({"egress"})
    drafts = rules("allow write_file(path ~ 'drafts/**')")
    assert conditional_labels("fs.write:project/**", write, drafts, "ask", POLICY) == frozenset()
    into_site = rules("allow write_file(path ~ 'site/blog/**')")
    assert conditional_labels("fs.write:project/**", write, into_site, "ask", POLICY) is None  # nothing narrowed
    # the rules see paths relative to the toolset's root: under `path: site` everything is published
    assert conditional_labels("fs.write:project/site/**", write, drafts, "ask", POLICY) is None
    read = frozenset({"private", "untrusted"})
    inbox = rules("allow read_file(path ~ 'inbox/**')")
    assert conditional_labels("fs.read:project/**", read, inbox, "ask", POLICY) == frozenset({"untrusted"})
    assert conditional_labels("proc.exec:ls", frozenset({"egress"}), drafts, "ask", POLICY) is None
