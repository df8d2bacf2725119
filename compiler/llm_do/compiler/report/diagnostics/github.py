"""`--format github`: GitHub Actions workflow commands, one annotation per diagnostic."""

from __future__ import annotations

from . import ProjectDiagnostics, cwd_relative

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(results: list[ProjectDiagnostics]) -> str:
    lines = []
    for result in sorted(results, key=lambda r: r.project):
        for d in result.diagnostics:
            props = [f"file={_escape_property(cwd_relative(result.root, d.file))}"]
            if d.line:
                props.append(f"line={d.line}")
            if d.column:
                props.append(f"col={d.column}")
            props.append(f"title={_escape_property(f'llm-do {d.code}')}")
            message = d.message + (f" (hint: {d.hint})" if d.hint else "")
            lines.append(f"::{_LEVEL[d.severity.value]} {','.join(props)}::{_escape_data(f'{d.code} {message}')}")
    return "\n".join(lines)
