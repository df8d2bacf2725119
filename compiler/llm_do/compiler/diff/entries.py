"""The entries `diff` reports: one per cause, in every format (spec/diff.md#one-entry-per-cause).

A change at a tool several workers reach (an approval relaxed at a shared leaf, a tool added
there) makes each of those workers reach something new: one capability change per worker. They
have one cause, so they are one entry, naming the workers, with the approval change at that tool
leading for the gates it changed. One edit of the instructions of several workers (a template
they include, a `vars` value they use) is one entry naming them too. Code changes are already one
per cause (`diff.code`). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .change import SEVERITIES, Change, Severity


@dataclass
class CauseEntry:
    """One cause: its leading change, the workers that see it, and the changes folded into it."""

    change: Change
    workers: list[str] = field(default_factory=list)
    folded: list[Change] = field(default_factory=list)

    @property
    def severity(self) -> Severity:
        return min((c.severity for c in [self.change, *self.folded]), key=SEVERITIES.index)

    @property
    def capabilities(self) -> list[str]:
        """The capabilities its changes are about (`fs.write:project/**`), each once."""
        return sorted({c.subject.rsplit(" of ", 1)[0] for c in [self.change, *self.folded] if c.area == "capability"})


def entries(changes: list[Change]) -> list[CauseEntry]:
    """One entry per cause: capability changes with one cause (and verb) fold into one; those that
    only changed gate fold into the approval change at that tool when there is one (a capability
    gained with it, `mv` from another toolset, is its own entry). Keeps the risky-first order."""
    out: list[CauseEntry] = []
    groups: dict[tuple[str, str], CauseEntry] = {}
    approvals = {c.cause for c in changes if c.area == "approval" and c.cause}
    for change in changes:
        if change.cause is not None and change.area == "instructions":  # one edit several workers' texts share
            entry = groups.get((change.area, change.cause))
            if entry is None:
                entry = groups[(change.area, change.cause)] = CauseEntry(change, [change.worker] if change.worker else [])
                out.append(entry)
            else:
                entry.folded.append(change)
                entry.workers += [change.worker] if change.worker else []
            continue
        if change.cause is None or change.area not in ("capability", "approval"):
            out.append(CauseEntry(change, list(change.users) or ([change.worker] if change.worker else [])))
            continue
        by_gate = change.area == "approval" or (change.note or "").startswith("approval ")
        key = ("approval", change.cause) if by_gate and change.cause in approvals else (change.verb, change.cause)
        entry = groups.get(key)
        if entry is None:
            entry = groups[key] = CauseEntry(change)
            out.append(entry)
        elif change.area == "approval":  # the approval change is the cause; what it made reachable folds under it
            entry.folded.insert(0, entry.change)
            entry.change = change
        else:
            entry.folded.append(change)
        if change.area == "capability" and change.worker and change.worker not in entry.workers:
            entry.workers.append(change.worker)
    for entry in out:
        if not entry.workers and entry.change.worker:
            entry.workers.append(entry.change.worker)
    return sorted(out, key=lambda e: (SEVERITIES.index(e.severity), e.change.sort_key()))


def counts(found: list[CauseEntry]) -> dict[str, int]:
    return {s: sum(e.severity == s for e in found) for s in SEVERITIES}


LISTED = 10
"""Most workers an entry's subject names (then a count): the report stays short at any size."""


def first_names(names: list[str]) -> str:
    """`a, b, c`, or the first `LISTED` and how many more."""
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return ", ".join(names[:LISTED]) + more
