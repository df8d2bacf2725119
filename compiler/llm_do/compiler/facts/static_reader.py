"""Facts from reading the project's Python with `ast` instead of importing it (`lint --no-import`).

For untrusted pull requests: nothing runs. What can be seen without running is checked (syntax,
class names and bases, prompt_messages, literal TOOLS/TOOLSETS names, a tool's parameters and
description from its `def`); what cannot (schemas, entry.args, tools built at import time) is left unchecked rather than
guessed.
"""

from __future__ import annotations

import ast

from llm_do.bundle.names import SERVICE_KIND, service_name_problem
from llm_do.toolkit import user_code

from ..syntax.sources import SourceMap
from .answers import ClassFact, ClassRequest, Facts, ModuleFact, PyError, ToolFact, ToolsetFact
from .static_description import description_of, parameter_descriptions
from .static_signature import parameters_of

_ARGS_BASES = {"WorkerArgs", "AgentArgs", "PromptInput"}
NOT_IMPORTED = "read without importing"
"""The opaque reason of a toolset the text cannot list: its tools are made when the module runs."""


def read_statically(sources: SourceMap, python_files: list[str], classes: list[ClassRequest]) -> Facts:
    facts = Facts(imported=False)
    trees: dict[str, ast.Module] = {}
    for rel in python_files:
        fact, tree = _module(sources, rel)
        facts.modules[rel] = fact
        if tree is not None:
            trees[fact.module] = tree
            for prefix in registered_prefixes(tree):
                facts.model_factories.setdefault(prefix, rel)
    for req in classes:
        cls_fact = ClassFact(ref=req.ref, module=req.module, qualname=req.qualname, file=req.file)
        facts.classes[req.ref] = cls_fact
        if req.file is None:
            continue  # an installed module: nothing to read without importing
        tree = trees.get(req.module)
        if tree is None:
            fact_file = _module(sources, req.file)
            cls_fact.error = fact_file[0].error
            tree = fact_file[1]
        if tree is None:
            continue
        _class_fact(tree, cls_fact)
    return facts


def registered_prefixes(tree: ast.Module) -> list[str]:
    """Prefixes a module registers at its top level with a literal:
    `register_model_factory("my-gateway", build)` (or `llm_do.register_model_factory(...)`)."""
    out = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        first = call.args[0]
        if name == "register_model_factory" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            out.append(first.value.strip())
    return out


def _module(sources: SourceMap, rel: str) -> tuple[ModuleFact, ast.Module | None]:
    fact = ModuleFact(file=rel, module=user_code.module_name(rel) or "")
    try:
        text = sources.read(rel, "python").text
        tree = ast.parse(text, filename=rel)
    except SyntaxError as exc:
        fact.error = PyError(message=f"SyntaxError: {exc.msg}", file=rel, line=exc.lineno, column=exc.offset)
        return fact, None
    except (MemoryError, RecursionError):  # CPython's parser gives up on deep nesting this way
        fact.error = PyError(message="SyntaxError: nested too deeply to be parsed", file=rel, line=1)
        return fact, None
    except (OSError, ValueError) as exc:
        fact.error = PyError(message=str(exc), file=rel)
        return fact, None
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    public_toolsets: list[ToolsetFact] = []
    declared: set[str] = set()
    for node, targets, value in _assignments(tree):
        declared.update(t for t in targets if t in ("TOOLS", "TOOLSETS"))
        if "__all__" in targets and "TOOLS" not in declared:
            exported = _literal_strings(value)
            if exported is None:
                fact.complete = False
            else:
                fact.tools = [_tool(functions[n]) for n in exported if n in functions]
                fact.tools_export = "__all__" if fact.tools else None
        if _is_toolset_call(value):
            public_toolsets += [ToolsetFact(name=t, opaque_reason=NOT_IMPORTED, line=node.lineno)
                                for t in targets if not t.startswith("_")]
        if "TOOLS" in targets:
            fact.tools_export = "TOOLS"
            names = _literal_names(value)
            if names is None:
                fact.complete = False
            else:
                fact.tools = [_tool(functions[n], line) if n in functions else ToolFact(name=n, line=line) for n, line in names]
        if "TOOLSETS" in targets:
            names = _literal_names(value, keys_only=True)
            if names is None:
                fact.complete = False
            else:
                fact.toolsets = [ToolsetFact(name=n, opaque_reason=NOT_IMPORTED, line=line) for n, line in names]
    if _mutated_exports(tree):
        fact.complete = False  # `TOOLS += [...]`, `TOOLS.append(...)`: built by code after all
    if "TOOLSETS" not in declared:
        fact.toolsets = public_toolsets  # without TOOLSETS, its public toolset instances are exported
    fact.capabilities, problem = declared_capabilities(tree)
    if problem is not None:
        fact.export_errors.append(problem)
    return fact, tree


def _mutated_exports(tree: ast.Module) -> bool:
    """Whether module-level code changes TOOLS or TOOLSETS after assigning it."""
    for node in tree.body:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in ("TOOLS", "TOOLSETS"):
            return True
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id in ("TOOLS", "TOOLSETS"):
            return True
    return False


def _tool(function: ast.FunctionDef | ast.AsyncFunctionDef, line: int | None = None) -> ToolFact:
    """A tool defined in the module: its parameters and description from the `def` (a tool
    imported from elsewhere has none known)."""
    return ToolFact(name=function.name, line=line or function.lineno,
                    parameters=parameters_of(function, parameter_descriptions(function)), description=description_of(function))


CAPABILITY_SHAPE = "CAPABILITIES must be a literal dict of tool or toolset name to a list of 'KIND:SCOPE' strings"


def declared_capabilities(tree: ast.Module) -> tuple[dict[str, list[str]], PyError | None]:
    """A module's `CAPABILITIES = {"fetch": ["net:api.example.com"]}`: what its tools can do
    beyond `custom:NAME`. Read from the text in both introspection paths, so `--no-import` sees the
    same declarations; a value that is not literal is an error rather than a guess."""
    for node, targets, value in _assignments(tree):
        if "CAPABILITIES" not in targets:
            continue
        out: dict[str, list[str]] = {}
        if not isinstance(value, ast.Dict):
            return {}, PyError(message=CAPABILITY_SHAPE, line=node.lineno)
        for key, item in zip(value.keys, value.values):
            strings = _literal_strings(item)
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) or strings is None \
                    or not all(_capability_text(c) for c in strings):
                return {}, PyError(message=CAPABILITY_SHAPE, line=getattr(key, "lineno", node.lineno))
            for text in strings:
                kind, _, scope = text.partition(":")
                if kind == SERVICE_KIND and (problem := service_name_problem(scope)) is not None:
                    return {}, PyError(message=f"CAPABILITIES: '{text}': {problem}", line=getattr(item, "lineno", node.lineno))
            out[key.value] = sorted(set(strings))
        return out, None
    return {}, None


def _capability_text(text: str) -> bool:
    kind, _, scope = text.partition(":")
    return bool(kind) and all(c.isalnum() or c in "._-" for c in kind) and text.strip() == text


def _assignments(tree: ast.Module) -> list[tuple[ast.stmt, list[str], ast.expr | None]]:
    """Module-level `NAME = value` statements: (statement, assigned names, value)."""
    out = []
    for node in tree.body:
        targets = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        if targets:
            out.append((node, targets, getattr(node, "value", None)))
    return out


def export_lines(tree: ast.Module) -> dict[str, int]:
    """Lines of `TOOLS = ...` / `TOOLSETS = ...` and of each literal entry (`TOOLS.name`): the
    import subprocess reports a malformed export there."""
    lines: dict[str, int] = {}
    for node, targets, value in _assignments(tree):
        for export in ("TOOLS", "TOOLSETS"):
            if export in targets:
                lines[export] = node.lineno
                for name, line in _literal_names(value) or ():
                    lines[f"{export}.{name}"] = line
    return lines


def _literal_strings(value: ast.expr | None) -> list[str] | None:
    if isinstance(value, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    ):
        return [e.value for e in value.elts]  # type: ignore[attr-defined]
    return None


def _is_toolset_call(value: ast.expr | None) -> bool:
    """`X = FunctionToolset(...)` and the like: a module-level toolset, as far as the text shows."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name.endswith("Toolset")


def _literal_names(value: ast.expr | None, keys_only: bool = False) -> list[tuple[str, int]] | None:
    """Names of a literal dict (its string keys) or list (its bare names); None when not literal."""
    if isinstance(value, ast.Dict):
        out = []
        for key in value.keys:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            out.append((key.value, key.lineno))
        return out
    if isinstance(value, (ast.List, ast.Tuple)) and not keys_only:
        out = []
        for item in value.elts:
            if not isinstance(item, ast.Name):
                return None
            out.append((item.id, item.lineno))
        return out
    return None


def _class_fact(tree: ast.Module, fact: ClassFact) -> None:
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    fact.candidates = sorted(classes)
    node = classes.get(fact.qualname)
    if node is None:
        return
    fact.found = True
    fact.line = node.lineno

    unknown_bases: list[str] = []

    def bases(cls: ast.ClassDef, seen: set[str]) -> tuple[bool, bool, bool]:
        """(is model, is WorkerArgs, implements prompt_messages) as far as this file shows."""
        own = any(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) and b.name == "prompt_messages" for b in cls.body)
        model = args = False
        for base in cls.bases:
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if name in _ARGS_BASES:
                model = args = True
                own = own or name == "PromptInput"
            elif name == "BaseModel":
                model = True
            elif name in classes and name not in seen:
                m, a, o = bases(classes[name], seen | {name})
                model, args, own = model or m, args or a, own or o
            else:
                unknown_bases.append(name or "?")
        return model, args, own

    fact.is_model, fact.is_worker_args, implements = bases(node, {node.name})
    fact.abstract = fact.is_worker_args and not implements
    fact.certain = not unknown_bases
