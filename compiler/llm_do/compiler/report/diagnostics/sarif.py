"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it."""

from __future__ import annotations

import json

from llm_do.bundle.version import VERSION

from ...codes import RULES
from . import ProjectDiagnostics, cwd_relative

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _region(line: int | None, column: int | None) -> dict[str, int]:
    region = {"startLine": line or 1}
    if column:
        region["startColumn"] = column
    return region


def render_sarif(results: list[ProjectDiagnostics]) -> str:
    used = sorted({d.code for r in results for d in r.diagnostics})
    rule_index = {code: i for i, code in enumerate(used)}
    sarif_results = []
    for result in sorted(results, key=lambda r: r.project):
        for d in result.diagnostics:
            text = d.message + (f"\nhint: {d.hint}" if d.hint else "")
            item = {
                "ruleId": d.code,
                "ruleIndex": rule_index[d.code],
                "level": _LEVEL[d.severity.value],
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": cwd_relative(result.root, d.file)},
                        "region": _region(d.line, d.column),
                    }
                }],
            }
            if d.related:
                item["relatedLocations"] = [
                    {
                        "id": i,
                        "message": {"text": r.message},
                        "physicalLocation": {
                            "artifactLocation": {"uri": cwd_relative(result.root, r.file)},
                            "region": _region(r.line, r.column),
                        },
                    }
                    for i, r in enumerate(d.related)
                ]
            sarif_results.append(item)
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": RULES[code].summary},
            "fullDescription": {"text": RULES[code].explanation},
            "help": {"text": f"{RULES[code].explanation}\n\nRun `llm-do explain {code}` for this text."},
            "defaultConfiguration": {"level": _LEVEL[RULES[code].severity]},
        }
        for code in used
    ]
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            # No informationUri or helpUri: llm-do has no published site, and a link that does not
            # resolve is worse than none; `help` says how to read the explanation offline.
            "tool": {"driver": {"name": "llm-do", "version": VERSION, "rules": rules}},
            "results": sarif_results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
