"""Reading single values out of a sealed bundle without decoding the rest of it."""

from __future__ import annotations

import json

from llm_do.bundle.canonical import document_json, seal, verify_digest
from llm_do.bundle.reader import DIRECT_LOOKUPS, LockReader
from llm_do.runtime.bundle import python_sources

DOC = {
    "@generated": "by a test",
    "digest": "",
    "entry": {"worker": "main", "args": {"input": "a \"quoted\"\nline"}},
    "sources": {
        "a.worker": {"kind": "worker", "sha256": "sha256:1"},
        "pkg/tools.py": {"kind": "python", "sha256": "sha256:2"},
        "schemas.py": {"kind": "python", "sha256": "sha256:3"},
    },
    "toolsets": {"files": {"name": "files", "tools": {}}},
    "workers": {
        "helper": {"name": "helper", "calls": []},
        "main": {"name": "main", "calls": ["helper"], "note": "ünïcode — fine"},
        "empty": {},
    },
    "zlast": [1, 2],
}


def test_values_and_members_decode_alone_as_the_whole_document_does() -> None:
    data = seal(DOC)
    verify_digest(data)
    reader = LockReader(data)
    whole = json.loads(data)
    assert reader.get("entry") == whole["entry"]
    assert reader.get("zlast") == [1, 2]
    assert reader.get("missing", "default") == "default"
    for name in ("helper", "main", "empty"):
        assert reader.member("workers", name) == whole["workers"][name]
    assert reader.member_names("workers") == ["empty", "helper", "main"]


def test_a_member_of_a_later_section_is_not_found_in_an_earlier_one() -> None:
    reader = LockReader(seal(DOC))
    assert reader.member("toolsets", "main") is None  # `main` is a worker, further down
    assert reader.member("workers", "files") is None  # `files` is a toolset, further up
    assert reader.member("nosection", "main") is None


def test_python_sources_are_found_by_their_lines() -> None:
    reader = LockReader(document_json(DOC))
    assert python_sources(reader) == {"pkg/tools.py": "sha256:2", "schemas.py": "sha256:3"}


def test_members_with_quotes_and_backslashes_in_their_names_are_found() -> None:
    names = ['say "hi": now', "back\\slash", 'ends\\"', "plain"]
    doc = {**DOC, "workers": {name: {"name": name, "n": i} for i, name in enumerate(names)}}
    reader = LockReader(seal(doc))
    for i, name in enumerate(names):
        assert reader.member("workers", name) == {"name": name, "n": i}
    assert reader.member("workers", "say") is None
    assert reader.member("nothing", "plain") is None


def test_members_found_by_search_and_by_the_index_agree() -> None:
    """The first lookups of a section search the bytes, the later ones read its index: both find
    every member, including names a naive search would cut short, and nothing else."""
    names = [f"w{i}" for i in range(DIRECT_LOOKUPS + 4)] + ['say "hi": now', "back\\slash", 'ends\\"', "w1 ", "w"]
    doc = {**DOC, "workers": {name: {"name": name, "n": i} for i, name in enumerate(names)}}
    whole = json.loads(seal(doc))
    reader = LockReader(seal(doc))
    for name in reversed(names):
        assert reader.member("workers", name) == whole["workers"][name]
    for missing in ("say", "w1  ", "back", "W0"):
        assert reader.member("workers", missing) is None
    assert reader.member("toolsets", "w0") is None
    empty_first = LockReader(seal({**doc, "toolsets": {}}))
    assert empty_first.member("toolsets", "w0") is None  # an empty section: w0 is a worker, further down
