"""Worker bodies as Jinja templates, rendered at build time.

Sandboxed, `StrictUndefined`, includes and `file()` confined to the project root and recorded as
sources. Problems are found from the template's AST first (syntax, every undefined variable,
missing or escaping includes), so one lint reports all of them; rendering runs only when that
analysis found nothing. Bodies without template syntax never reach Jinja.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from .. import codes
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..syntax.limits import MAX_RENDERED_CHARS
from ..syntax.sources import NotText, OutsideRoot, SourceFile, SourceMap, Unreadable, lexically_confined
from .limits import nesting_overflow
from .search import SEARCH_HINT, template_candidates

if TYPE_CHECKING:
    from jinja2 import nodes

    from .sandbox import BoundedSandbox

_SYNTAX = re.compile(r"\{[{%#]")
_SECRET_NAMES = re.compile(
    r"(^|/)(\.env(\..*)?|\.netrc|\.npmrc|\.pypirc|id_(rsa|dsa|ecdsa|ed25519)|credentials(\.json)?|secrets?\.(json|ya?ml|toml))$"
    r"|\.(pem|key|p12|pfx)$",
    re.I,
)
TEMPLATE_GLOBALS = ("file",)


def has_template_syntax(text: str) -> bool:
    return _SYNTAX.search(text) is not None


def looks_secret(path: str) -> bool:
    return _SECRET_NAMES.search(path) is not None


@dataclass
class TemplateUnit:
    """One template: a worker body (`line_offset` = its first line - 1) or an included file."""

    file: str
    text: str
    line_offset: int = 0
    include_site: Related | None = None
    directory: str | None = None
    """A directory worker's directory: searched first for its includes (`templates.search`)."""

    def location(self, line: int | None, column: int | None = None) -> Location:
        return Location(file=self.file, line=(line or 1) + self.line_offset, column=column)


@dataclass
class TemplateContext:
    """What every template of a project shares: the sources, `vars`, the Jinja environment."""

    sources: SourceMap
    variables: dict[str, Any]
    _env: Any = None
    analyzed: dict[str, list[Diagnostic]] = field(default_factory=dict)
    include_sites: dict[str, Related] = field(default_factory=dict)
    """Where each included template was first included from."""
    parsed: dict[str, Any] = field(default_factory=dict)
    """Worker bodies' syntax trees from the analysis, compiled from without parsing again."""
    directory: str | None = None
    """The directory of the directory worker being rendered (None: a single-file worker)."""

    @property
    def env(self):
        if self._env is None:
            self._env = _environment(self)
        return self._env


def _environment(ctx: TemplateContext) -> BoundedSandbox:
    from jinja2 import BaseLoader, StrictUndefined, TemplateNotFound

    from .sandbox import BoundedSandbox

    class ProjectLoader(BaseLoader):
        def get_source(self, environment, template):
            try:
                source = find_template(ctx, template, ctx.directory)
            except (OSError, OutsideRoot, NotText, Unreadable):
                raise TemplateNotFound(template) from None
            directory = ctx.directory
            # a name found in one worker's directory is another file for the next worker
            return source.text, source.path, lambda: directory == ctx.directory

    env = BoundedSandbox(
        loader=ProjectLoader(), undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    env.globals["file"] = lambda path: ctx.sources.read(lexically_confined(str(path)), "file").text
    return env


_PLAIN_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SCALARS = (str, int, float, bool, type(None))


def substitute_plain_variables(text: str, variables: dict[str, Any]) -> str | None:
    """The rendering of a body whose only template syntax is `{{ name }}` of scalar vars, without
    Jinja; None when the body needs Jinja. Jinja renders such a body as `str(value)` in place, so
    the result is the same, at a fraction of the cost of compiling a template per worker."""
    names = _PLAIN_VARIABLE.findall(text)
    if not names or not all(n in variables and isinstance(variables[n], _SCALARS) for n in names):
        return None
    rendered = _PLAIN_VARIABLE.sub(lambda m: str(variables[m.group(1)]), text)
    return None if has_template_syntax(_PLAIN_VARIABLE.sub("", text)) else rendered


def render_plain(text: str, variables: dict[str, Any]) -> str | None:
    """The rendering of a body that needs no Jinja (no template syntax, or only `{{ name }}` of
    scalar vars): it reads no file and finds no problem. None when the body needs Jinja."""
    if not has_template_syntax(text):
        return text.strip()
    plain = substitute_plain_variables(text, variables)
    return None if plain is None else plain.strip()


def find_template(ctx: TemplateContext, name: str, directory: str | None) -> SourceFile:
    """The template `name` stands for, by the search order of `templates.search`. Raises
    OutsideRoot, or what reading the first candidate that exists raises (OSError: none exists)."""
    candidates = template_candidates(name, directory)
    for rel in candidates[:-1]:
        try:
            return ctx.sources.read(rel, "template")
        except (FileNotFoundError, NotADirectoryError):
            continue
    return ctx.sources.read(candidates[-1], "template")


def render_body(ctx: TemplateContext, unit: TemplateUnit) -> tuple[str | None, list[Diagnostic]]:
    """The rendered instructions, or None with the diagnostics that explain why not."""
    ctx.directory = unit.directory
    plain = render_plain(unit.text, ctx.variables)
    if plain is not None:
        return plain, []
    diagnostics = analyze(ctx, unit, defined=set())
    if any(d.is_error for d in diagnostics):
        return None, diagnostics
    try:
        template = ctx.env.from_string(ctx.parsed.pop(unit.file, None) or unit.text)
        rendered = template.render(**ctx.variables).strip()
    except Exception as exc:  # a template may raise anything while rendering; report where
        return None, diagnostics + [_render_error(ctx, unit, exc)]
    if len(rendered) > MAX_RENDERED_CHARS:
        return None, diagnostics + [diagnostic(
            codes.LIMIT_EXCEEDED, f"the instructions render to {len(rendered)} characters, more than the {MAX_RENDERED_CHARS} allowed",
            unit.location(1, 1))]
    return rendered, diagnostics


def _render_error(ctx: TemplateContext, unit: TemplateUnit, exc: Exception) -> Diagnostic:
    """T006 at the innermost template line the traceback passes through (the body or a project
    file it includes); frames of Python's own modules (`<frozen posixpath>`) are not places."""
    import traceback

    file, line = unit.file, None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<template>":
            file, line = unit.file, (frame.lineno or 1) + unit.line_offset
        elif frame.filename in ctx.sources.files and ctx.sources.files[frame.filename].kind == "template":
            file, line = frame.filename, frame.lineno
    if isinstance(exc, RecursionError | MemoryError):  # Python's parser overflows with MemoryError
        message = "the template nests too deeply, or includes or calls itself without end"
    else:
        message = f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"
    site = ctx.include_sites.get(file)
    return diagnostic(codes.TEMPLATE_ERROR, f"rendering failed: {message}", Location(file=file, line=line),
                      related=(site,) if site else ())


def analyze(ctx: TemplateContext, unit: TemplateUnit, defined: set[str]) -> list[Diagnostic]:
    """Static checks of one template and, through its includes, of every template it reaches."""
    from jinja2 import TemplateSyntaxError, meta

    related = (unit.include_site,) if unit.include_site else ()
    too_deep = nesting_overflow(ctx.env, unit.text)
    if too_deep is not None:
        line, message = too_deep
        return [diagnostic(codes.LIMIT_EXCEEDED, f"the template has {message}", unit.location(line), related=related)]
    try:
        tree = ctx.env.parse(unit.text)
        undeclared = meta.find_undeclared_variables(tree)  # also finds what only the compiler refuses
        return _analyze_tree(ctx, unit, tree, undeclared, defined, related)
    except TemplateSyntaxError as exc:  # and TemplateAssertionError (a block defined twice, ...)
        return [diagnostic(codes.TEMPLATE_SYNTAX, f"template syntax error: {exc.message}", unit.location(exc.lineno), related=related)]
    except RecursionError:
        return [diagnostic(codes.TEMPLATE_SYNTAX, "template syntax error: nested too deeply to be read", unit.location(1, 1),
                           related=related)]


def _analyze_tree(ctx: TemplateContext, unit: TemplateUnit, tree: nodes.Template, undeclared: set[str], defined: set[str],
                  related: tuple[Related, ...]) -> list[Diagnostic]:
    from jinja2 import nodes

    if unit.include_site is None:
        ctx.parsed[unit.file] = tree
    out: list[Diagnostic] = []
    known = set(ctx.variables) | set(TEMPLATE_GLOBALS) | set(ctx.env.globals) | defined
    undeclared = undeclared - known
    first_use: dict[str, int] = {}
    for name_node in tree.find_all(nodes.Name):
        if name_node.ctx == "load" and name_node.name in undeclared:
            first_use.setdefault(name_node.name, name_node.lineno)
    lines = unit.text.split("\n")
    for name, line in sorted(first_use.items(), key=lambda kv: (kv[1], kv[0])):
        out.append(diagnostic(
            codes.UNDEFINED_VARIABLE, f"undefined variable '{name}'", unit.location(line, _column(lines, line, name)),
            hint=_undefined_hint(name, ctx.variables), related=related,
        ))
    assigned = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    loading = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)
    for node in tree.find_all(loading):
        if isinstance(node, loading):  # always true: narrows find_all's result for the type checker
            out.extend(_check_include(ctx, unit, node, defined | assigned, related))
    for call in tree.find_all(nodes.Call):
        if isinstance(call.node, nodes.Name) and call.node.name == "file" and call.args and isinstance(call.args[0], nodes.Const):
            out.extend(_check_file_call(ctx, unit, str(call.args[0].value), call.lineno, related))
    return out


def _column(lines: list[str], line: int, name: str) -> int | None:
    if not 0 < line <= len(lines):
        return None
    match = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", lines[line - 1])
    return match.start() + 1 if match else None


def _undefined_hint(name: str, variables: dict[str, Any]) -> str:
    from ..syntax.hints import undefined_variable_hint

    return undefined_variable_hint(name, variables)


def _check_include(ctx: TemplateContext, unit: TemplateUnit,
                   node: nodes.Include | nodes.Import | nodes.FromImport | nodes.Extends, defined: set[str], related: tuple[Related, ...]) -> list[Diagnostic]:
    from jinja2 import nodes

    target = node.template
    if not isinstance(target, nodes.Const) or not isinstance(target.value, str):
        return []  # a computed name: checked when rendering
    name = target.value
    at = unit.location(node.lineno, _column(unit.text.split("\n"), node.lineno, name))
    try:
        source = find_template(ctx, name, unit.directory)
    except (OutsideRoot, NotText, Unreadable) as exc:
        return [_unusable(exc, "include", f"included '{name}'", at, related)]
    except OSError:
        return [diagnostic(codes.INCLUDE_NOT_FOUND, f"included template '{name}' not found", at,
                           hint=SEARCH_HINT, related=related)]
    out = []
    if looks_secret(source.path):
        out.append(diagnostic(codes.SECRET_IN_BUNDLE, f"'{source.path}' looks like a secrets file and is baked into the bundle", at))
    seen = f"{unit.directory or ''}:{source.path}"  # its own includes are searched from the worker's directory
    if seen in ctx.analyzed:
        return out + ctx.analyzed[seen]  # repeated for each includer; the pipeline drops the duplicates
    ctx.analyzed[seen] = []
    site = Related(file=at.file, line=at.line, column=at.column, message="included from here")
    ctx.include_sites.setdefault(source.path, site)
    found = analyze(ctx, TemplateUnit(source.path, source.text, 0, site, unit.directory), defined)
    ctx.analyzed[seen] = found
    return out + found


def _check_file_call(ctx: TemplateContext, unit: TemplateUnit, path: str, line: int, related: tuple[Related, ...]) -> list[Diagnostic]:
    at = unit.location(line, _column(unit.text.split("\n"), line, path))
    try:
        source = ctx.sources.read(lexically_confined(path), "file")
    except (OutsideRoot, NotText, Unreadable) as exc:
        return [_unusable(exc, "file()", f"file('{path}')", at, related)]
    except OSError:
        return [diagnostic(codes.INCLUDE_NOT_FOUND, f"file('{path}'): no such file in the project", at, related=related)]
    if looks_secret(source.path) or looks_secret(PurePosixPath(path).name):
        return [diagnostic(codes.SECRET_IN_BUNDLE, f"'{source.path}' looks like a secrets file and is baked into the bundle", at)]
    return []


def _unusable(exc: OutsideRoot | NotText | Unreadable, call: str, named: str, at: Location,
              related: tuple[Related, ...]) -> Diagnostic:
    """Why an include or a `file()` cannot use what it names (`call`: how the message names the
    call, `named`: the call with its argument): outside the root, not text, or unreadable."""
    if isinstance(exc, OutsideRoot):
        return diagnostic(codes.INCLUDE_OUTSIDE_ROOT, f"{call} {exc}", at, related=related)
    return diagnostic(codes.NOT_TEXT if isinstance(exc, NotText) else exc.code, f"{named} is {exc}", at, related=related)
