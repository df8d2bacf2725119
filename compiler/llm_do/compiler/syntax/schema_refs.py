"""`schema_in_ref` / `schema_out_ref`: `path.py:Class` for a project file, `package.module:Class`
for an installed module (and, in `.agent` files, the older `module.Class`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_do.bundle.errors import LlmDoError
from llm_do.toolkit.user_code import module_name

from .. import codes
from .sources import OutsideRoot, lexically_confined

_QUALNAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class SchemaRef:
    text: str
    module: str
    qualname: str
    file: str | None
    """Relative path of the project file, for the `path.py:Class` form."""


class RefProblem(LlmDoError, ValueError):
    def __init__(self, code: codes.Rule, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


def parse_ref(text: str, *, legacy: bool = False) -> SchemaRef:
    """Parse a reference; raises RefProblem with the diagnostic code to report."""
    text = text.strip()
    if ":" not in text:
        if legacy and "." in text and _QUALNAME.match(text):
            module, _, qualname = text.rpartition(".")
            return SchemaRef(text, module, qualname, None)
        raise RefProblem(codes.INVALID_REF, f"'{text}' is not a class reference",
                       hint="write `schemas.py:ClassName` or `package.module:ClassName`")
    left, _, qualname = text.rpartition(":")
    if not _QUALNAME.match(qualname):
        raise RefProblem(codes.INVALID_REF, f"'{qualname}' in '{text}' is not a class name")
    if left.endswith(".py") or "/" in left or "\\" in left:
        try:
            rel = lexically_confined(left)
        except OutsideRoot as exc:
            raise RefProblem(codes.PATH_OUTSIDE_ROOT, f"schema reference {exc}") from None
        path_module = module_name(rel)
        if path_module is None:
            raise RefProblem(codes.INVALID_REF,
                             f"'{left}' cannot be imported as a module: every part of the path must be a Python identifier",
                             hint="rename the file, e.g. `my-schemas.py` to `my_schemas.py`")
        return SchemaRef(text, path_module, qualname, rel)
    if not _QUALNAME.match(left):
        raise RefProblem(codes.INVALID_REF, f"'{left}' in '{text}' is neither a .py path nor a module name",
                       hint="write `schemas.py:ClassName` or `package.module:ClassName`")
    return SchemaRef(text, left, qualname, None)
