"""Y001-Y005: the project's Python imports, exports well-formed TOOLS/TOOLSETS, lists its tools."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, Location, diagnostic
from ..resolved import ResolvedProject


def check_python_imports(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    facts = project.facts
    failure = facts.failure
    if failure is not None:
        at = Location(file=failure.file, line=failure.line or 1) if failure.file else project.loaded.at("python_files")
        return [diagnostic(codes.RULES[facts.failure_code] if facts.failure_code else codes.INTROSPECTION_FAILED, failure.message, at)]
    out: list[Diagnostic] = []
    reported: set[tuple[str | None, int | None, str]] = set()
    for module in facts.modules.values():
        if module.error is not None:
            failed = module.error
            key = (failed.file, failed.line, failed.message)
            reported.add(key)
            out.append(diagnostic(codes.PYTHON_IMPORT_ERROR, f"importing '{module.file}' failed: {failed.message}",
                                  Location(file=failed.file or module.file, line=failed.line or 1, column=failed.column)))
        for export_error in module.export_errors:
            out.append(diagnostic(codes.INVALID_EXPORT, export_error.message,
                                  Location(file=export_error.file or module.file, line=export_error.line)))
        for ts in module.toolsets:
            if ts.tools is None and facts.imported and _used(project, module.file, ts.name):
                out.append(diagnostic(codes.OPAQUE_TOOLSET, f"toolset '{ts.name}' is opaque: {ts.opaque_reason}",
                                      Location(file=module.file, line=ts.line),
                                      hint="its tools are asked by default; approvals can name the toolset"))
    for cls in facts.classes.values():
        err = cls.error
        if err is not None and (err.file, err.line, err.message) not in reported:
            reported.add((err.file, err.line, err.message))
            at = (Location(file=err.file, line=err.line or 1, column=err.column) if err.file
                  else _reference(project, cls.ref) or Location(file=cls.file or project.loaded.manifest_file, line=1))
            out.append(diagnostic(codes.PYTHON_IMPORT_ERROR, f"importing '{cls.module}' failed: {err.message}", at))
    function = project.entry_function
    err = function.fact.error if function is not None and function.fact is not None else None
    if (function is not None and err is not None and function.ref is not None
            and (err.file, err.line, err.message) not in reported):
        at = Location(file=err.file, line=err.line or 1, column=err.column) if err.file else function.at
        out.append(diagnostic(codes.PYTHON_IMPORT_ERROR,
                              f"importing '{function.ref.file or function.ref.module}' (the entry function's module) "
                              f"failed: {err.message}", at))
    if not facts.imported and (facts.modules or facts.classes):
        out.append(diagnostic(codes.NOT_IMPORTED, "Python was read without importing it: schemas and entry.args are not checked",
                              project.loaded.at("python_files")))
    return out


def _used(project: ResolvedProject, file: str, toolset: str) -> bool:
    """Whether a worker uses the toolset `toolset` of the module in `file` (a directory worker's
    toolset is keyed by module and name, so the name alone does not say)."""
    keys = {k for k, ts in project.python_toolsets.items() if ts.module.file == file and ts.fact.name == toolset}
    return any(u.kind == "python" and u.name in keys for w in project.workers.values() for u in w.toolsets)


def _reference(project: ResolvedProject, ref: str) -> Location | None:
    """Where a worker names the class `ref`: the place to report an installed module that fails."""
    for name in sorted(project.workers):
        worker = project.workers[name]
        for key, used in (("schema_in_ref", worker.input_ref), ("schema_out_ref", worker.output_ref)):
            if used is not None and used.text == ref:
                return worker.parsed.at(key)
    return None
