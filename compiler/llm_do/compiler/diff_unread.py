"""`diff --no-import`: the changes two documents read without import cannot judge, as entries.

A source that differs where the text could not be interpreted is never "no changes": it is one
`changed FILE (not evaluated without import)` entry (medium: a reviewer must read it) naming what
it may affect, and the report says what was not compared at all (spec/diff.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .bundle_diff import BundleDiff, Change
from .unread import NOT_EVALUATED, unread, unread_changes


def without_import(diff: BundleDiff, old: dict[str, Any], new: dict[str, Any]) -> BundleDiff:
    """`diff` with an entry per source it could not interpret that differs, and what it did not compare."""
    added = [Change("medium", change.verb, "unevaluated", f"{change.file} ({NOT_EVALUATED})",
                    note="may affect: " + "; ".join(change.affects), file=change.file,
                    detail=[f"used by: {', '.join(change.workers)}"] if change.workers else [])
             for change in unread_changes(old, new)]
    not_compared = list(dict.fromkeys(unread(old) + unread(new)))
    return replace(diff, changes=sorted(diff.changes + added, key=Change.sort_key), not_compared=not_compared)
