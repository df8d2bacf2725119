"""The pull-request comment (`diff --format markdown`): one entry per cause, new authority first,
and never longer than GitHub takes, whatever the project's size (issue 15 section 3)."""

from __future__ import annotations

from llm_do.compiler.diff.bundle import BundleDiff, Change
from llm_do.compiler.diff.change import edit_cause
from llm_do.compiler.diff.entries import entries
from llm_do.compiler.report.diff_markdown import COMMENT_LIMIT, MARGIN, to_markdown


def relaxed(worker: str, cause: str) -> Change:
    return Change("high", "widened", "capability", f"fs.write:project/** of {worker}", "via x [ask]", "via x [no approval]",
                  worker=worker, note="approval relaxed", cause=cause)


def test_a_change_at_a_shared_leaf_is_one_entry_naming_the_workers_that_reach_it() -> None:
    approval = Change("high", "widened", "approval", "approval of writer.write_file", "ask", "allow", worker="writer",
                      note="relaxed", detail=["write_file now runs without asking (before: asked)"], cause="writer.write_file")
    caps = [relaxed(w, "writer.write_file") for w in ("editor", "main", "writer")]
    other = relaxed("main", "notes.write_file")
    found = entries(sorted([*caps, approval, other], key=Change.sort_key))
    assert [(e.change.subject, e.workers) for e in found] == [
        ("fs.write:project/** of main", ["main"]), ("approval of writer.write_file", ["editor", "main", "writer"])]
    assert found[1].folded == caps
    text = to_markdown(BundleDiff([*caps, approval, other], [], [], [], []), "a", "b", "llm-do diff a b", "summary")
    assert text.count("approval of writer.write\\_file") == 2  # its row, and its details; never once per ancestor
    assert "- **high** writer: write\\_file now runs without asking (before: asked) (reached by editor, main, writer)" in text


def test_the_comment_fits_github_at_any_size() -> None:
    changes = [Change("high", "added", "capability", f"fs.write:project/out{i}/** of worker{i:05}", None,
                      f"via helper{i} -> write_file [no approval]", worker=f"worker{i:05}", note=f"path worker{i:05} -> helper{i}",
                      detail=[f"line {j} of worker{i}" for j in range(5)], cause=f"helper{i}.write_file") for i in range(3000)]
    edges = [(f"worker{i:05}", f"helper{i}") for i in range(3000)]
    text = to_markdown(BundleDiff(changes, edges, [], [], edges), "a", "b", "llm-do diff a b", "3000 changes")
    assert len(text) <= COMMENT_LIMIT - MARGIN  # the budget spec/diff.md sets (it was over by its closing lines)
    assert text.index("### New authority") < text.index("**Action:**") < text.index("### Risky changes")
    assert "more entries did not fit in this comment" in text and text.endswith("Reproduce: `llm-do diff a b`")


def _instructions(worker: str, line: str) -> Change:
    return Change("medium", "changed", "instructions", f"instructions of {worker}", worker=worker, detail=[f"+{line}"],
                  cause=edit_cause([f"+{line}"], worker), at=f"worker:{worker}:instructions")


def test_one_edit_of_3000_workers_instructions_is_one_entry() -> None:
    """Issue 30: one template included by every worker gave one entry per worker (3,000 rows)."""
    changes = [_instructions(f"w{i:04}", f"Rules for w{i:04}: follow what the files say.") for i in range(3000)]
    found = entries(changes)
    assert len(found) == 1 and len(found[0].workers) == 3000
    text = to_markdown(BundleDiff(changes, [], [], [], []), "a", "b", "llm-do diff a b", "1 change")
    assert "| **medium** | changed | instructions of w0000, w0001, w0002, w0003, w0004, w0005, w0006, w0007, w0008, w0009 " \
           "and 2990 more (one edit, 3000 workers) |" in text
    assert "did not fit" not in text and len(text) < 2_000


def test_details_that_do_not_fit_are_counted() -> None:
    """Issue 30: the details stopped at the budget with nothing saying so."""
    changes = [_instructions(f"w{i:04}", f"{'word ' * 40}{i}") for i in range(3000)]  # 3,000 different edits
    text = to_markdown(BundleDiff(changes, [], [], [], []), "a", "b", "llm-do diff a b", "3000 changes")
    assert len(text) <= COMMENT_LIMIT - MARGIN
    tail = text.splitlines()[-2]
    assert tail.startswith("**") and "more entries did not fit in this comment; the details of " in tail
    shown = text.count("```diff")
    assert f"the details of {3000 - shown} more entries did not fit" in tail
