"""The information-flow vocabulary: the labels a capability carries and the project's flow policy
as the bundle records it (spec/language.md, "flows").

Standard library only: the compiler labels grants with these names and the bundle model declares
them; a run-time reader of the labels needs nothing else.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Final, Literal, Protocol

Label = Literal["private", "untrusted", "egress"]
"""`private`: can read data the owner would not publish; `untrusted`: returns content a third
party can write; `egress`: can send data where others can read it."""

PRIVATE: Final = "private"
UNTRUSTED: Final = "untrusted"
EGRESS: Final = "egress"
LABELS: Final[tuple[Label, ...]] = ("private", "untrusted", "egress")
"""Every label, in the order reports list the legs of a flow."""

PathLabel = Literal["private", "published", "untrusted"]
"""What project.json may say of one of its folders (`flows.paths`)."""

PUBLISHED: Final = "published"
INPUT: Final = "input"
"""The leg name of what a run is given from outside (the entry's input and attachments)."""
TRUSTED: Final = "trusted"
ANY: Final = "*"
"""In a flow acceptance's leg: any capability."""
INERT: Final = "inert"
"""The key the build sets (to true) on a `flows.accept` entry that accepts nothing (R006): the run
honours only the entries the build counts as accepting."""


class AcceptanceLegs(Protocol):
    """A `flows.accept` entry as both sides read it: its legs by name."""

    def __getitem__(self, leg: str, /) -> Any: ...


def covers(entry: AcceptanceLegs, private: str, untrusted: str, egress: str) -> bool:
    """Whether a `flows.accept` entry names the combination of a private, an untrusted and an
    egress capability (`*`: any). The one matcher of the build (R003, R006, `capabilities`) and
    the run's taint guard, so that an entry means the same to both (red team L6)."""
    return all(ANY in entry[leg] or name in entry[leg]
               for leg, name in ((PRIVATE, private), (UNTRUSTED, untrusted), (EGRESS, egress)))


def input_label(inputs: str | None) -> str | None:
    """The label a run's input carries under `flows.inputs` (`untrusted` by default, `private` for
    the owner's own requests); None when it is trusted."""
    if inputs == TRUSTED:
        return None
    return PRIVATE if inputs == PRIVATE else UNTRUSTED


def folder_label(path: str, paths: Mapping[str, str]) -> str | None:
    """The label `flows.paths` gives the project path `path` (`docs/plan.md`): its nearest labelled
    folder's; None when no folder around it is labelled (a read of it is then private)."""
    found: tuple[int, str] | None = None
    for folder, label in paths.items():
        folder = posixpath.normpath(folder.replace("\\", "/").strip("/")) or "."
        if folder == "." or path == folder or path.startswith(folder + "/"):
            depth = 0 if folder == "." else folder.count("/") + 1
            if found is None or depth > found[0]:
                found = (depth, label)
    return None if found is None else found[1]
