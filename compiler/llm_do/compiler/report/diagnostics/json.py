"""`--format json`: one document on stdout; every listed key always present."""

from __future__ import annotations

import json

from ...diagnostics import related_json
from . import ProjectDiagnostics, counts


def render_json(results: list[ProjectDiagnostics]) -> str:
    rows = []
    for result in sorted(results, key=lambda r: r.project):
        for d in result.diagnostics:
            rows.append({
                "code": d.code,
                "severity": d.severity.value,
                "message": d.message,
                "file": d.file,
                "line": d.line,
                "column": d.column,
                "hint": d.hint,
                "project": result.project,
                "related": [related_json(r) for r in d.related],
            })
    rows.sort(key=lambda r: (r["project"], r["file"], r["line"] or 0, r["column"] or 0))
    c = counts(results)
    doc = {
        "diagnostics": rows,
        "summary": {"errors": c["error"], "warnings": c["warning"], "infos": c["info"]},
        "projects": sorted(r.project for r in results),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
