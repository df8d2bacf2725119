"""The introspection subprocess: imports the project's Python and answers with JSON facts.

Run as `python -m llm_do.compiler.facts.child` with the request on stdin. It imports user
code, which runs it; that is why it is a separate, time-limited process whose only output is one
JSON document on the real stdout (user prints go to stderr). It must import nothing heavy before
user code asks for it: pydantic-ai is imported only to describe tools. Usually it runs forked from
the introspection fork server (`fork_server`), which has pydantic-ai loaded but out of sight until
something imports it, so that what this module reports as loaded is what a fresh start loads.
"""

from __future__ import annotations

import faulthandler
import importlib
import importlib.machinery
import inspect
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from llm_do.bundle.regular_files import what_instead
from llm_do.provenance.import_checks import file_stamp
from llm_do.runtime.args import WorkerArgs
from llm_do.toolkit import user_code

from .answers import (
    ArgsCheck,
    ClassFact,
    ClassRequest,
    Facts,
    FunctionFact,
    FunctionRequest,
    ImportEnvironment,
    ModuleFact,
    PyError,
    Request,
    ToolFact,
    ToolsetFact,
)
from .project_reads import ProjectReads


def _rel(root: Path, filename: str | None) -> str | None:
    if not filename or not os.path.isabs(filename):  # `<frozen importlib._bootstrap>` and the like
        return None
    real = _real(filename)
    inside = str(root) + os.sep
    return Path(real[len(inside):]).as_posix() if real.startswith(inside) else None


_REAL_FOLDERS: dict[str, str] = {}


def _real(filename: str) -> str:
    """`os.path.realpath(filename)`, the folders resolved once for the whole answer: a module file
    of each of a thousand loaded modules costs one `lstat`, not one per part of its path."""
    folder, name = os.path.split(filename)
    real_folder = _REAL_FOLDERS.get(folder)
    if real_folder is None:
        real_folder = _REAL_FOLDERS[folder] = os.path.realpath(folder)
    return os.path.realpath(filename) if os.path.islink(filename) else os.path.join(real_folder, name)


def _error(root: Path, exc: BaseException) -> PyError:
    """The error and the innermost line of a project file it came from; never a traceback."""
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ImportError) and exc.name:
        passed_by = _passed_by(root, exc.name)
        if passed_by:
            message += f" ({passed_by})"
    if isinstance(exc, SyntaxError) and exc.filename:
        return PyError(message=f"SyntaxError: {exc.msg}", file=_rel(root, exc.filename), line=exc.lineno, column=exc.offset)
    file = line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        rel = _rel(root, frame.filename)
        if rel is not None and "site-packages" not in frame.filename:
            file, line = rel, frame.lineno
    return PyError(message=message, file=file, line=line)


def _passed_by(root: Path, name: str) -> str | None:
    """What stands in the project where the import system looked for module `name` and passed by:
    a file with a module's name, or a package's `__init__`, that is no regular file (a folder, a
    named pipe, a device; the package is then a namespace package without it)."""
    parent, _, tail = name.rpartition(".")
    folders = (getattr(sys.modules.get(parent), "__path__", None) or []) if parent else sys.path
    inside = str(root) + os.sep
    for folder in list(folders):
        for suffix in importlib.machinery.all_suffixes():
            for candidate in (os.path.join(folder or ".", tail + suffix), os.path.join(folder or ".", tail, "__init__" + suffix)):
                found = _not_regular(os.path.abspath(candidate), inside)
                if found:
                    return found
    return None


def _not_regular(candidate: str, inside: str) -> str | None:
    """`candidate` (a path in the project) and what it is, when it exists and is no regular file."""
    if not candidate.startswith(inside):
        return None
    try:
        problem = what_instead(os.stat(candidate))
    except OSError:
        return None
    return f"{Path(candidate[len(inside):]).as_posix()} is {problem}" if problem else None


def _line(obj: Any) -> int | None:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return None


def _tool_fact(name: str, value: Any) -> ToolFact:
    from pydantic_ai import Tool

    tool = value if isinstance(value, Tool) else Tool(value, name=name)
    tool_def = tool.tool_def
    return ToolFact(
        name=name,
        description=tool_def.description,
        parameters=tool_def.parameters_json_schema,
        line=_line(tool.function),
    )


def _export_lines(module: Any, fact: ModuleFact) -> dict[str, int]:
    """Lines of the exports, and the literal CAPABILITIES (both read from the text)."""
    import ast

    from .static_reader import declared_capabilities, export_lines

    try:
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8-sig"))
    except (OSError, SyntaxError, TypeError, ValueError):
        return {}
    fact.capabilities, problem = declared_capabilities(tree)
    if problem is not None:
        fact.export_errors.append(problem)
    return export_lines(tree)


def _tools(module: Any, fact: ModuleFact, lines: dict[str, int]) -> None:
    export, items = user_code.exported_tools(module)
    fact.tools_export = export if items else None
    if export == "TOOLS" and not items and getattr(module, "TOOLS", None):
        fact.export_errors.append(PyError(message=f"TOOLS must be a dict or a list, not {type(module.TOOLS).__name__}",
                                          line=lines.get("TOOLS")))
        return
    for name, value in items:
        if not isinstance(name, str) or not (callable(value) or hasattr(value, "tool_def")):
            fact.export_errors.append(PyError(message=f"TOOLS entry {name!r} is not a function or a pydantic-ai Tool",
                                              line=lines.get(f"TOOLS.{name}", lines.get("TOOLS"))))
            continue
        try:
            fact.tools.append(_tool_fact(name, value))
        except Exception as exc:  # a bad signature is the user's to fix, reported per tool
            fact.export_errors.append(PyError(message=f"tool '{name}': {type(exc).__name__}: {exc}",
                                              line=_line(value) or lines.get(f"TOOLS.{name}", lines.get("TOOLS"))))


def _toolsets(module: Any, fact: ModuleFact, lines: dict[str, int]) -> None:
    exported = getattr(module, "TOOLSETS", None)
    if exported is not None and not isinstance(exported, (dict, list, tuple)):
        fact.export_errors.append(PyError(message=f"TOOLSETS must be a dict or a list, not {type(exported).__name__}",
                                          line=lines.get("TOOLSETS")))
        return
    items = user_code.exported_toolsets(module)
    if not items:
        return
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

    for name, value in items:
        line = lines.get(f"TOOLSETS.{name}", lines.get("TOOLSETS"))
        if not isinstance(name, str):
            fact.export_errors.append(PyError(message=f"a TOOLSETS item without a name or id: {value!r}"[:200], line=line))
            continue
        if isinstance(value, FunctionToolset):
            tools = [_tool_fact(n, t) for n, t in value.tools.items()]
            fact.toolsets.append(ToolsetFact(name=name, tools=tools, line=line))
        elif isinstance(value, AbstractToolset):
            fact.toolsets.append(ToolsetFact(name=name, opaque_reason=f"a {type(value).__name__} lists its tools only when it runs",
                                             line=line))
        elif callable(value):
            fact.toolsets.append(
                ToolsetFact(name=name, opaque_reason="built by a factory when a run starts", line=_line(value) or line)
            )
        else:
            fact.export_errors.append(PyError(message=f"TOOLSETS entry '{name}' is not a toolset or a toolset factory",
                                              line=line))


def _module(root: Path, rel: str) -> tuple[ModuleFact, Any]:
    name = user_code.module_name(rel) or ""
    fact = ModuleFact(file=rel, module=name)
    try:
        module = user_code.import_module(name)
    except BaseException as exc:  # user code may raise anything, SystemExit included
        fact.error = _error(root, exc)
        return fact, None
    lines = _export_lines(module, fact)
    for reader in (lambda: _tools(module, fact, lines), lambda: _toolsets(module, fact, lines)):
        try:
            reader()
        except BaseException as exc:
            fact.export_errors.append(_error(root, exc))
    return fact, module


def _class(root: Path, req: ClassRequest, failed: dict[str, PyError]) -> tuple[ClassFact, Any]:
    fact = ClassFact(ref=req.ref, module=req.module, qualname=req.qualname, file=req.file)
    if req.module in failed:
        fact.error = failed[req.module]
        return fact, None
    try:
        module = user_code.import_module(req.module)
    except BaseException as exc:
        fact.error = failed[req.module] = _error(root, exc)
        return fact, None
    fact.candidates = sorted(n for n, v in vars(module).items() if inspect.isclass(v) and not n.startswith("_"))
    try:
        cls = user_code.resolve_attr(module, req.qualname)
    except AttributeError:
        return fact, None
    fact.found = True
    if not inspect.isclass(cls):
        return fact, None
    from pydantic import BaseModel

    fact.line = _line(cls) if _rel(root, getattr(module, "__file__", None)) else None
    fact.is_model = issubclass(cls, BaseModel)
    fact.is_worker_args = issubclass(cls, WorkerArgs)
    fact.abstract = inspect.isabstract(cls)
    if issubclass(cls, BaseModel):
        try:
            fact.json_schema = cls.model_json_schema()
        except Exception as exc:
            fact.schema_error = f"{type(exc).__name__}: {exc}"
    return fact, cls


def _entry_function(root: Path, req: FunctionRequest, failed: dict[str, PyError]) -> FunctionFact:
    """Find the entry function, read its signature, and validate entry.args against its input."""
    from llm_do.runtime.entry_signature import EntrySignatureProblem, entry_params

    fact = FunctionFact(ref=req.ref)
    if req.module in failed:
        fact.error = failed[req.module]
        return fact
    try:
        module = user_code.import_module(req.module)
    except BaseException as exc:
        fact.error = failed[req.module] = _error(root, exc)
        return fact
    fact.candidates = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_"))
    try:
        func = user_code.resolve_attr(module, req.qualname)
    except AttributeError:
        return fact
    fact.found = True
    fact.line = _line(func)
    try:
        params = entry_params(func)
    except EntrySignatureProblem as exc:
        fact.problem = str(exc)
        return fact
    cls = params.input_class
    if cls is not None:
        fact.input = ClassFact(ref=f"{cls.__module__}:{cls.__qualname__}", module=cls.__module__, qualname=cls.__qualname__,
                               found=True, is_model=True, is_worker_args=True, abstract=inspect.isabstract(cls),
                               line=_line(cls), file=_rel(root, getattr(sys.modules.get(cls.__module__), "__file__", None)))
        try:
            fact.input.json_schema = cls.model_json_schema()
        except Exception as exc:
            fact.input.schema_error = f"{type(exc).__name__}: {exc}"
    if req.args is not None:
        from pydantic import ValidationError

        from llm_do.runtime.args import PromptInput

        try:
            (cls or PromptInput).model_validate(req.args)
        except ValidationError as exc:
            fact.args_errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors(include_url=False)]
        except Exception as exc:
            fact.args_errors = [{"loc": [], "msg": f"{type(exc).__name__}: {exc}", "type": "error"}]
    return fact


def _packages(modules: list[str]) -> dict[str, str]:
    """Distribution name -> version of the installed packages `modules` come from."""
    from importlib import metadata

    out: dict[str, str] = {}
    if not modules:
        return out  # reading every distribution's records costs more than the rest of an answer
    owners = metadata.packages_distributions()
    editable: list[tuple[str, str, str]] | None = None
    for module in modules:
        dists = owners.get(module.split(".")[0], [])
        for dist in dists:
            try:
                out[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
        if not dists:
            editable = _editable_installs() if editable is None else editable
            filename = os.path.realpath(getattr(sys.modules.get(module), "__file__", None) or "")
            for name, version, location in editable:
                if filename.startswith(location + os.sep):
                    out[name] = version
    return out


def _editable_installs() -> list[tuple[str, str, str]]:
    """(name, version, source directory) of packages installed in development mode, which
    `packages_distributions` does not see (their RECORD lists only a .pth file)."""
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    out = []
    for dist in metadata.distributions():
        try:
            info = json.loads(dist.read_text("direct_url.json") or "null")
        except ValueError:
            continue
        if not isinstance(info, dict) or not info.get("dir_info", {}).get("editable"):
            continue
        url = urlparse(info.get("url", ""))
        if url.scheme == "file":
            out.append((dist.metadata["Name"], dist.version, os.path.realpath(unquote(url.path))))
    return out


def _registered_prefixes() -> set[str]:
    """Prefixes given to `register_model_factory` so far (its module is loaded only if user code did)."""
    registry = sys.modules.get("llm_do.runtime.model_factories")
    return set(registry.registered_prefixes()) if registry is not None else set()


def answer(request: Request, reads: ProjectReads | None = None) -> Facts:
    """`reads`: the audit hook's record, installed before any user code ran (for the cache)."""
    root = Path(request.root).resolve()
    user_code.add_root(str(root))
    if request.agent_era:
        from llm_do.runtime import legacy_tools

        legacy_tools.enable(str(root))
    facts = Facts(imported=True)
    failed: dict[str, PyError] = {}
    for rel in request.python_files:
        before = _registered_prefixes()
        fact, _ = _module(root, rel)
        facts.modules[rel] = fact
        if fact.error:
            failed[fact.module] = fact.error
        for prefix in sorted(_registered_prefixes() - before):
            facts.model_factories[prefix] = rel
    classes: dict[str, Any] = {}
    for req in request.classes:
        facts.classes[req.ref], classes[req.ref] = _class(root, req, failed)
    if request.entry_function is not None:
        facts.entry_function = _entry_function(root, request.entry_function, failed)
    for ref, args in request.validate_args:
        cls = classes.get(ref)
        if cls is None or not facts.classes[ref].is_model:
            continue
        from pydantic import ValidationError

        check = ArgsCheck(ref=ref)
        try:
            cls.model_validate(args)
        except ValidationError as exc:
            check.errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors(include_url=False)]
        except Exception as exc:
            check.errors = [{"loc": [], "msg": f"{type(exc).__name__}: {exc}", "type": "error"}]
        facts.args_checks.append(check)
    loaded = set()
    for module in list(sys.modules.values()):
        loaded_file: str | None = getattr(module, "__file__", None)
        loaded_rel = _rel(root, loaded_file)
        if loaded_rel and loaded_file and loaded_rel.endswith(".py") and "site-packages" not in loaded_file and not any(
            part.startswith(".") for part in Path(loaded_rel).parts
        ):
            loaded.add(loaded_rel)
    facts.loaded_files = sorted(loaded)
    facts.packages = _packages([r.module for r in request.classes if r.file is None])
    facts.environment = _environment(root, reads)
    return facts


def _environment(root: Path, reads: ProjectReads | None) -> ImportEnvironment | None:
    """What the imports read in the project, and the module files and `sys.path` folders outside
    it as they are after the imports; None when nothing recorded the project's reads."""
    if reads is None:
        return None
    inside = str(root) + os.sep
    environment = ImportEnvironment(project_files=sorted(reads.files), project_folders=sorted(reads.folders),
                                    variables=sorted(reads.variables),
                                    outside_files={path: file_stamp(path) for path in sorted(reads.outside)})
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str) or not os.path.isabs(filename):
            continue
        real = _real(filename)
        if real.startswith(inside):
            continue
        try:
            st = os.stat(real)
        except OSError:
            continue
        environment.module_files[real] = [st.st_mtime_ns, st.st_size]
    for entry in sys.path:
        real = os.path.realpath(entry or ".")
        if real == str(root) or real.startswith(inside):
            continue
        try:
            environment.path_folders[real] = os.stat(real).st_mtime_ns
        except OSError:
            environment.path_folders[real] = None
    return environment


def main() -> None:
    if hasattr(signal, "SIGUSR1"):  # past the time limit, the parent asks where the child is (`subprocess_runner`)
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=False)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever user code prints goes to stderr, never into the answer
    sys.stdout = sys.stderr
    request = Request.model_validate_json(sys.stdin.read())
    reads = ProjectReads(Path(request.root).resolve())
    reads.install()
    importlib.invalidate_caches()  # folders listed before the hook are listed again, and heard
    facts = answer(request, reads)
    out.write(facts.model_dump_json())
    out.flush()


if __name__ == "__main__":
    main()
