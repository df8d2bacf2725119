"""The rule registry: every diagnostic code, its name, severity, summary and explanation.

Each rule is a module constant named after it (`UNKNOWN_KEY` is P005 `unknown-key`), and code
raises a diagnostic with the constant, `diagnostic(codes.UNKNOWN_KEY, ...)`, as mypy raises
`codes.ATTR_DEFINED`: where a code is raised is found by its references, and a misspelt code is an
error for mypy and at import. tests/compiler/test_codes_raised.py checks that every rule is
raised somewhere and that no code is raised as a string.

A code never changes meaning. `llm-do explain CODE` prints the explanation, which therefore names
no file of this repository (they are not installed); spec/diagnostics.md is
generated from this table (tests keep the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

SeverityName = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Rule:
    code: str
    """What the output, `suppress` and `llm-do explain` name: `P005`."""
    name: str
    """`unknown-key`; the constant that holds the rule is this name upper-cased, `-` as `_`."""
    severity: SeverityName
    summary: str
    explanation: str

    def __repr__(self) -> str:
        return f"<rule {self.code} {self.name}>"


RULES: dict[str, Rule] = {}
"""Every rule by its code, in the order of this module (each constant enters itself)."""


def _rule(code: str, name: str, severity: SeverityName, summary: str, explanation: str) -> Rule:
    """A rule, entered in RULES."""
    if code in RULES:
        raise ValueError(f"{code} is declared twice")
    RULES[code] = made = Rule(code, name, severity, summary, explanation)
    return made


# --- P: syntax and structure of project.json and front matter
YAML_SYNTAX: Final = _rule(
    "P001", "yaml-syntax", "error", "The front matter is not valid YAML.",
    "The block between the two `---` lines at the top of a .worker file is parsed as YAML. The "
    "diagnostic points at the mistake, where llm-do recognizes it (the `[`, `{` or quote that is "
    "never closed, a tab, a key or list item indented out of line, a line without `key: value`), "
    "and otherwise at the place the YAML parser gave up; quoting a value that contains `: ` "
    "or starts with `*`, `&`, `!`, `@` or `%` is the usual fix.")
JSON_SYNTAX: Final = _rule(
    "P002", "json-syntax", "error", "project.json is not valid JSON.",
    "project.json must be one JSON object. Trailing commas and comments are not JSON.")
MISSING_FRONT_MATTER: Final = _rule(
    "P003", "missing-front-matter", "error", "A worker file does not start with front matter.",
    "A .worker file starts with a line `---`, then YAML front matter, then a line `---`, then the "
    "instructions. Even a worker with nothing to declare needs `---` / `---` at the top.")
UNTERMINATED_FRONT_MATTER: Final = _rule(
    "P004", "unterminated-front-matter", "error", "The front matter has no closing `---` line.",
    "The front matter starts with `---` on the first line and ends at the next line that is "
    "exactly `---`. Without it the whole file would be read as YAML.")
UNKNOWN_KEY: Final = _rule(
    "P005", "unknown-key", "error", "A key that the format does not define.",
    "project.json and front matter are strict: a misspelt key would otherwise be ignored "
    "silently. The hint names the closest known key.")
INVALID_VALUE: Final = _rule(
    "P006", "invalid-value", "error", "A value of the wrong type or out of range.",
    "Each key has a type, and the message says what was expected: a string, a list, a mapping "
    "of one toolset name to its settings, a number in range.")
INVALID_NAME: Final = _rule(
    "P007", "invalid-name", "error", "A worker name that is not an identifier.",
    "Worker names match `[A-Za-z_][A-Za-z0-9_-]*`: they become tool names a model calls, so "
    "spaces, dots and leading digits are not allowed.")
DUPLICATE_KEY: Final = _rule(
    "P008", "duplicate-key", "error", "The same key twice in one mapping.",
    "YAML would keep only the last value; llm-do treats the repetition as a mistake.")
NOT_TEXT: Final = _rule(
    "P009", "not-text", "error", "A source file is not UTF-8 text.",
    "Worker files, project.json, templates and Python files are read as UTF-8 (a byte-order "
    "mark is allowed and ignored).")
UNSUPPORTED_VERSION: Final = _rule(
    "P010", "unsupported-version", "error", "project.json declares a version this compiler does not know.",
    "The manifest format is version 1.")
LIMIT_EXCEEDED: Final = _rule(
    "P011", "limit-exceeded", "error", "A file or a value beyond the limits the compiler reads.",
    "Project files are at most 4 MiB; project.json and front matter nest lists and mappings at "
    "most 100 deep, and YAML aliases may expand to at most 100000 values; glob patterns "
    "are at most 1000 characters; rendered instructions are at most 4 MiB; a template nests blocks at most 20 deep "
    "and an expression at most 40; an approval condition nests `not` and parentheses at most 100 deep. Such inputs are never what a project needs, and the "
    "limits keep a stray or hostile file from stalling or crashing the build.")
# --- F: files and paths
FILE_NOT_FOUND: Final = _rule(
    "F001", "file-not-found", "error", "A file the project names does not exist.",
    "Paths in project.json and in references are relative to the project root (the directory "
    "of project.json).")
PATH_OUTSIDE_ROOT: Final = _rule(
    "F002", "path-outside-root", "error", "A path that leaves the project root.",
    "Every file a project uses must lie inside its root, so the bundle is self-contained and a "
    "build cannot read arbitrary files: absolute paths, `..` past the root and symlinks that "
    "point out are refused. The folder `worker_create` writes to may not be in `.git` either: "
    "git's own directory is not the project's, and what is written there can change what git runs.")
GLOB_MATCHES_NOTHING: Final = _rule(
    "F003", "glob-matches-nothing", "warning", "A worker_files pattern matches no file.",
    "Usually a typo in the pattern or a file that was moved.")
DUPLICATE_FILE: Final = _rule(
    "F004", "duplicate-file", "warning", "A file listed more than once.",
    "It is loaded once; the repetition is probably a mistake.")
NOT_A_WORKER_FILE: Final = _rule(
    "F005", "not-a-worker-file", "error", "A worker_files entry that is not a .worker (or .agent) file.",
    "worker_files lists worker definitions; Python goes in python_files and templates are "
    "reached through `{% include %}`.")
NOT_A_REGULAR_FILE: Final = _rule(
    "F006", "not-a-regular-file", "error", "A project file that is a pipe, device, socket or directory.",
    "The compiler reads regular files only (symbolic links to regular files inside the root "
    "included): reading a named pipe or a device could wait forever or never end.")
CREATED_WORKERS_NOT_COLLECTED: Final = _rule(
    "F007", "created-workers-not-collected", "warning",
    "A worker_create folder that no worker_files entry covers.",
    "A worker created during a run is written to the folder of its toolset's `path` "
    "(default `workers/generated`); the next build takes it in only when a worker_files "
    "pattern matches it there, so without one the created worker is silently left out.")
FLOWS_PATH_MATCHES_NOTHING: Final = _rule(
    "F010", "flows-path-matches-nothing", "warning", "A `flows.paths` key that names no folder of the project.",
    "`flows.paths` labels project folders by name, relative to the root, after following links inside "
    "the project: a key that names no folder (a glob, a file, a typo, another case: `Site` beside "
    "`site/`) labels nothing, so the folder meant keeps the default labels (a write into it is no egress, "
    "a read of it is private). On a case-insensitive filesystem `Site` is the folder `site`, but labels "
    "match names exactly, so the build is the same everywhere: the hint gives the spelling of the folder, "
    "or the close name. A key that names a folder not made yet, close to no other, is not reported: it "
    "labels the folder once a run makes it.")
# --- N: names and references
DUPLICATE_WORKER: Final = _rule(
    "N001", "duplicate-worker", "error", "Two workers with the same name.",
    "Worker names are the names other workers call them by; each must be unique in a project. "
    "The diagnostic points at the second definition and relates the first.")
WORKER_SHADOWS_TOOLSET: Final = _rule(
    "N002", "worker-shadows-toolset", "error", "A worker named like a stdlib or Python toolset.",
    "Stdlib toolsets, Python toolsets and workers share one namespace in `toolsets:` lists.")
UNKNOWN_TOOLSET: Final = _rule(
    "N003", "unknown-toolset", "error", "A toolsets entry that names no toolset or worker.",
    "An entry in `toolsets:` is a stdlib toolset (such as `filesystem_project_ro` or "
    "`shell_readonly`), a toolset from a Python file's TOOLSETS, or the name of a worker this "
    "one may call. The hint names the closest of these (every toolset of a family: `shell` "
    "-> `shell_readonly` or `shell_file_ops`); for the name of a tool (`read_file`), the "
    "toolsets that have it.")
UNKNOWN_TOOL: Final = _rule(
    "N004", "unknown-tool", "error", "A tools entry that names no Python tool.",
    "An entry in `tools:` names a function exported by the TOOLS of a file in python_files.")
TOOL_NAME_CONFLICT: Final = _rule(
    "N005", "tool-name-conflict", "error", "Two toolsets of one worker expose the same tool name.",
    "A model calls tools by name, so each name may come from one place only. Drop one of the "
    "toolsets or rename the tool.")
UNKNOWN_ENTRY: Final = _rule(
    "N006", "unknown-entry", "error", "The entry names no worker.",
    "`entry.worker` in project.json must be the name of a worker of the project; without "
    "`entry.worker` (and without `entry.function`) the entry is the worker `main`. A project "
    "whose entry is a Python function sets `entry.function` instead and needs no entry worker.")
DUPLICATE_REFERENCE: Final = _rule(
    "N007", "duplicate-reference", "warning", "The same toolset or tool listed twice in one worker.",
    "It is used once; the repetition is probably a mistake.")
SETTINGS_NOT_ACCEPTED: Final = _rule(
    "N008", "settings-not-accepted", "error", "Settings given for a toolset that takes none.",
    "Only stdlib toolsets take settings in `toolsets:`; Python toolsets and workers are listed "
    "by name.")
DUPLICATE_PYTHON_NAME: Final = _rule(
    "N009", "duplicate-python-name", "error", "Two Python files export the same tool or toolset name.",
    "Tool and toolset names are global to a project.")
ENTRY_CONFLICT: Final = _rule(
    "N010", "entry-conflict", "error", "entry.worker and entry.function both given, or entry.calls without a function.",
    "A project's entry is one worker or one Python function, never both. `entry.calls` declares the "
    "workers an entry function calls; an entry worker's calls are its `toolsets`.")
UNKNOWN_ENTRY_FUNCTION: Final = _rule(
    "N011", "unknown-entry-function", "error", "entry.function names no function that can be an entry.",
    "`entry.function` is `PATH.py:NAME`: a file of the project and a function it defines, sync or "
    "async, taking at most a context and an input. The context is the parameter annotated with "
    "`CallContext` or named `ctx` or `runtime`; the other one is the input.")
UNKNOWN_CALLED_WORKER: Final = _rule(
    "N012", "unknown-called-worker", "error", "A `calls` entry that names no worker.",
    "`entry.calls` in project.json and `calls:` in front matter list the workers that Python code "
    "(the entry function, a worker's Python tools) calls by name. The hint names the closest worker.")
DIRECTORY_WORKER_NAME: Final = _rule(
    "N013", "directory-worker-name", "error", "A directory worker whose `name:` is not its directory's name.",
    "A file named `worker.worker` is the worker named after its directory: "
    "`workers/formatter/worker.worker` is `formatter`. A `name:` in its front matter that says "
    "otherwise would give one worker two names; remove it, or rename the directory.")
ENTRY_MARKED_TWICE: Final = _rule(
    "N014", "entry-marked-twice", "error", "Two places name the entry: two workers with `entry: true`, or one beside another entry.",
    "A project without project.json starts with `main.worker`, or else with the one worker whose "
    "front matter says `entry: true`. Two such workers, or `entry: true` on a worker that "
    "project.json's `entry` (or `main.worker`) does not name, leave it unclear where a run starts.")
# --- S: schemas
INVALID_REF: Final = _rule(
    "S001", "invalid-ref", "error", "A schema reference that is neither `path.py:Class` nor `package.module:Class`.",
    "schema_in_ref and schema_out_ref name a class: `schemas.py:Input` for a file of the "
    "project, `my_package.schemas:Input` for an installed module.")
REF_FILE_NOT_FOUND: Final = _rule(
    "S002", "ref-file-not-found", "error", "A schema reference names a file that does not exist.",
    "The path is relative to the project root.")
CLASS_NOT_FOUND: Final = _rule(
    "S003", "class-not-found", "error", "A schema reference names a class the module does not define.",
    "The hint lists the closest class names the module does define.")
NOT_WORKER_ARGS: Final = _rule(
    "S004", "not-worker-args", "error", "An input schema that does not subclass WorkerArgs.",
    "Input schemas subclass `llm_do.runtime.WorkerArgs` (a pydantic model) and implement "
    "`prompt_messages()`, which turns the fields into the prompt.")
PROMPT_MESSAGES_MISSING: Final = _rule(
    "S005", "prompt-messages-missing", "error", "An input schema that does not implement prompt_messages().",
    "WorkerArgs.prompt_messages() is abstract: without it the runtime could not build a prompt.")
NOT_A_MODEL: Final = _rule(
    "S006", "not-a-model", "error", "An output schema that is not a pydantic model.",
    "schema_out_ref names a pydantic BaseModel subclass; the worker's output is validated against it.")
INVALID_ENTRY_ARGS: Final = _rule(
    "S007", "invalid-entry-args", "error", "entry.args does not validate against the entry worker's input schema.",
    "entry.args is the default input of a run; it is checked at build time so a run does not "
    "fail on it later.")
# --- Y: user Python
PYTHON_IMPORT_ERROR: Final = _rule(
    "Y001", "python-import-error", "error", "A Python file fails to import.",
    "The compiler imports python_files and schema modules in a separate process to read their "
    "classes and tools. The message is the error the import raised, at the line it came from.")
PYTHON_IMPORT_TIMEOUT: Final = _rule(
    "Y002", "python-import-timeout", "error", "Importing the project's Python took too long.",
    "Imports run in a time-limited subprocess (LLM_DO_IMPORT_TIMEOUT seconds, default 60). "
    "The diagnostic points at the line of the project the import was still running when it "
    "was stopped. Module-level code that does real work belongs in a function.")
OPAQUE_TOOLSET: Final = _rule(
    "Y003", "opaque-toolset", "warning", "A Python toolset whose tools cannot be listed at build time.",
    "Toolsets built by a factory at run time, or of a kind llm-do cannot list, are recorded as "
    "opaque: the bundle cannot say which tools they expose, and tool-name conflicts and "
    "approval rules cannot be checked for them.")
INVALID_EXPORT: Final = _rule(
    "Y004", "invalid-export", "error", "TOOLS or TOOLSETS in a Python file has the wrong shape.",
    "TOOLS is a dict of name to function or a list of functions (or pydantic-ai Tools); "
    "TOOLSETS is a dict of name to toolset (or toolset factory) or a list of toolsets with ids.")
INTROSPECTION_FAILED: Final = _rule(
    "Y005", "introspection-failed", "error", "The introspection subprocess failed.",
    "The subprocess that imports the project's Python ended without an answer. The message "
    "carries what it printed.")
NOT_IMPORTED: Final = _rule(
    "Y006", "not-imported", "info", "Python was checked statically (--no-import).",
    "With --no-import the compiler reads Python files with the ast module instead of importing "
    "them: class and function names are checked, schemas and entry.args are not.")
SINGLE_FILE_WORKER_USES_PYTHON: Final = _rule(
    "Y007", "single-file-worker-uses-python", "info", "A single-file worker that depends on the project's Python.",
    "A single-file worker (`NAME.worker`) is portable when it uses built-in toolsets only: copied "
    "alone into another project, it works. One that uses a tool or toolset of python_files needs "
    "that file too. It is allowed; this note lists them "
    "for an author who wants them portable. Move the Python beside it in a directory worker "
    "(`NAME/worker.worker` + `NAME/tools.py`) to keep them together, or suppress Y007.")
# --- X: MCP servers
MCP_SERVER_UNLISTABLE: Final = _rule(
    "X001", "mcp-server-unlistable", "error", "An MCP server whose tools could not be listed at build time.",
    "Build and lint start each MCP server of project.json `mcp_servers` (in a time-limited "
    "subprocess, as they import Python) and lock the tools it lists. A server that does not "
    "start, does not answer, or needs an unset `${VAR}` is an error: the same project must "
    "build to the same bytes. Mark it `\"opaque\": true` to build without its tool list, or "
    "run `lint --no-import` to start nothing.")
MCP_UNKNOWN_TOOL: Final = _rule(
    "X002", "mcp-unknown-tool", "error", "`allowed_tools` names a tool the MCP server does not have.",
    "Only the tools in `allowed_tools` are exposed; a name the server does not list is a "
    "misspelling or a tool the server dropped. The hint names the closest tool it has.")
OPAQUE_MCP_SERVER: Final = _rule(
    "X003", "opaque-mcp-server", "warning", "An MCP server whose tools are not listed at build time.",
    "A server marked `\"opaque\": true` is not started at build: the bundle cannot say which "
    "tools it exposes (its capability is `custom:*`), tool-name conflicts and approval rules "
    "cannot be checked for it, and every tool it lists at run time is asked.")
MCP_SERVER_NAME: Final = _rule(
    "X004", "mcp-server-name", "error", "An MCP server named like a stdlib or Python toolset.",
    "Server names share the toolset namespace with the stdlib's and the project's Python "
    "toolsets and with workers: a worker lists a server by its name in `toolsets`.")
MCP_SERVER_CONFIG: Final = _rule(
    "X005", "mcp-server-config", "error", "An MCP server without exactly one of `command` and `url`.",
    "A server is either a program started over stdio (`command`, `args`, `env`) or a URL "
    "(`url`, `headers`), as in `.mcp.json`; `args`/`env` go with `command`, `headers` with `url`.")
MCP_NOT_STARTED: Final = _rule(
    "X006", "mcp-not-started", "info", "MCP servers were not started (--no-import).",
    "With --no-import nothing of the project runs, MCP servers included: the tools of the "
    "servers are unknown, so conflicts and approval rules involving them are not checked.")
MCP_LITERAL_SECRET: Final = _rule(
    "X007", "mcp-literal-secret", "warning", "A credential written literally in an MCP server's `env` or `headers`.",
    "The bundle keeps a server's configuration as written, so a token written into project.json "
    "is copied into bundle.lock (and into version control with it). Write `${VAR}` instead: it "
    "is read from the environment when the server starts and never written into the bundle. "
    "Keys whose name says credential (key, token, secret, password, auth, cookie, credential) "
    "are checked.")
MCP_REMOTE_UNRECORDED: Final = _rule(
    "X008", "mcp-remote-unrecorded", "error", "`llm-do test` offline, and no cassette recorded a remote MCP server.",
    "Without --live, `llm-do test` opens no connection: it builds the project with the tools "
    "its cases' cassettes recorded of each remote (`url`) server, and replays their answers. "
    "A remote server that no cassette recorded cannot be listed without reaching it. Record a "
    "case's cassette from a run that uses the server (`llm-do run . --record DIR`), "
    "or run `llm-do test --live`.")
# --- T: templates
TEMPLATE_SYNTAX: Final = _rule(
    "T001", "template-syntax", "error", "Instructions that are not a valid Jinja template.",
    "Worker bodies are Jinja templates rendered at build time. Use `{% raw %}` around text "
    "that contains `{{` or `{%` literally.")
UNDEFINED_VARIABLE: Final = _rule(
    "T002", "undefined-variable", "error", "A template variable that is not defined.",
    "Templates see the keys of `vars` in project.json and the function `file()`. Undefined "
    "variables are an error, found from the template itself rather than by rendering, so every "
    "one is reported.")
INCLUDE_NOT_FOUND: Final = _rule(
    "T003", "include-not-found", "error", "An `{% include %}` of a file that does not exist.",
    "Include paths are relative to the project root.")
INCLUDE_OUTSIDE_ROOT: Final = _rule(
    "T004", "include-outside-root", "error", "An include or file() path that leaves the project root.",
    "Templates may read files of the project only.")
SECRET_IN_BUNDLE: Final = _rule(
    "T005", "secret-in-bundle", "warning", "A file that looks like secrets is baked into the bundle.",
    "Files such as .env, *.pem or id_rsa read with `file()` or `{% include %}` end up in "
    "bundle.lock in clear text.")
TEMPLATE_ERROR: Final = _rule(
    "T006", "template-error", "error", "Rendering the instructions failed.",
    "The template is valid but raised an error when rendered with the project's vars.")
# --- G: the call graph
UNDECLARED_RECURSION: Final = _rule(
    "G001", "undeclared-recursion", "error", "A call cycle among workers not all declared `recursive: true`.",
    "A worker that can end up calling itself again must say so, so recursion is a decision and "
    "not an accident. Every worker on the cycle needs `recursive: true`.")
CALL_EXCEEDS_MAX_DEPTH: Final = _rule(
    "G002", "call-exceeds-max-depth", "error", "A call that can never run: the caller is already at max_depth.",
    "The entry runs at depth 1 and each call one deeper; runtime.max_depth (default 5) is the "
    "deepest a worker may run. With depth(W) the shortest call path from the entry to W, an "
    "edge U -> V with depth(U) >= max_depth would always be refused.")
UNREACHABLE_WORKER: Final = _rule(
    "G003", "unreachable-worker", "warning", "A worker the entry can never call.",
    "No chain of calls from the entry reaches it: it is dead code, or a toolsets entry is missing. "
    "A worker that only a Python tool calls is reached when the calling worker lists it under "
    "`calls:` in its front matter.")
ENTRY_CALLS_UNDECLARED: Final = _rule(
    "G004", "entry-calls-undeclared", "warning", "An entry function without `entry.calls`.",
    "The compiler cannot see which workers Python code calls, so it assumes the entry function may "
    "call every worker: the graph, depths and capabilities count every worker as called. List the "
    "workers it calls in `entry.calls`; a call to any other worker is then refused at run time.")
UNDECLARED_PYTHON_CALL: Final = _rule(
    "G005", "undeclared-python-call", "error", "Python calls a worker its caller does not declare.",
    "A Python tool of a worker, or the entry function, calls a worker by name (`ctx.deps.call_worker`, "
    "`ctx.deps.runtime.call_worker_async`, `CallContext.call_worker`, `call_worker_async(ctx, ...)`, "
    "`ctx.deps.worker`). Such a call is an edge of the call graph, so it must be declared: in the "
    "calling worker's `calls:` (a worker under its `toolsets` counts too), or in `entry.calls`. "
    "The build finds calls with a literal name; the runtime refuses any undeclared call, however it "
    "is spelt.")
# --- M: models
UNKNOWN_PROVIDER: Final = _rule(
    "M001", "unknown-provider", "error", "A model name whose provider prefix pydantic-ai does not know.",
    "Models are written `provider:model-name`, e.g. `openai:gpt-4o`, `anthropic:claude-sonnet-4-5`, "
    "`ollama:llama3.2`. `test` names pydantic-ai's TestModel.")
MODEL_AND_COMPATIBLE_MODELS: Final = _rule(
    "M002", "model-and-compatible-models", "error", "A worker sets both `model` and `compatible_models`.",
    "`model` fixes the model; `compatible_models` lets the run choose one that matches. Use one.")
DEFAULT_MODEL_INCOMPATIBLE: Final = _rule(
    "M003", "default-model-incompatible", "error", "The project default model matches none of a worker's compatible_models.",
    "A worker without `model` runs on its caller's model when that matches its patterns, and on the "
    "project default otherwise (and whenever it runs first, as the entry or from the command line), "
    "so the default must match one of its patterns.")
# --- A: approvals
INVALID_APPROVAL_RULE: Final = _rule(
    "A001", "invalid-approval-rule", "error", "An approvals entry that is not `ACTION TOOL` or `ACTION TOOL(CONDITION)`.",
    "ACTION is allow, ask or deny; TOOL a tool name, a toolset or worker name (all its tools), or a "
    "glob such as `*`; CONDITION tests the call's parameters: `path ~ 'out/**'`, `==`, `!=`, `<`, "
    "`<=`, `>`, `>=`, `in [..]`, joined with and, or, not and parentheses. The diagnostic points at "
    "the first word that does not fit and says what was expected there.")
APPROVAL_RULE_MATCHES_NOTHING: Final = _rule(
    "A002", "approval-rule-matches-nothing", "error", "An approval rule that matches none of the worker's tools.",
    "A rule for a tool the worker does not have is usually a typo, and would silently not apply.")
UNKNOWN_RULE_PARAMETER: Final = _rule(
    "A003", "unknown-rule-parameter", "error", "A condition tests a parameter the targeted tools do not have.",
    "A condition may test the tool's parameters (its JSON Schema) and the fields its toolset derives "
    "(shell's `argv`). A condition on a toolset or glob applies to those of its tools that have the "
    "parameter; when none has it the rule could never apply, so it is an error.")
RULE_TYPE_MISMATCH: Final = _rule(
    "A004", "rule-type-mismatch", "error", "A condition compares a parameter with a value of another type.",
    "`==`, `!=` and `in` compare with values of the parameter's type (a string with a string, a "
    "number with a number); `<`, `<=`, `>`, `>=` compare numbers only. A comparison that can never "
    "be true because of its types is a mistake, not a rule.")
GLOB_ON_NON_STRING: Final = _rule(
    "A005", "glob-on-non-string", "error", "`~` matches a glob against a parameter that is not a string.",
    "Globs match strings (paths, commands). Compare numbers and booleans with ==, !=, <, <=, >, >= "
    "or in.")
APPROVAL_RULE_OVERRULED: Final = _rule(
    "A006", "approval-rule-overruled", "warning", "An approval rule that decides no call: another rule always wins.",
    "A matching deny wins wherever it stands, so an allow or ask for tools a rule without a condition "
    "denies has no effect; between allow and ask the last matching rule decides, so a rule followed "
    "by a rule without a condition for the same tools has none either. To deny a toolset but one "
    "of its tools, allow that tool and deny the others by name.")
APPROVAL_RULE_NEVER_MATCHES: Final = _rule(
    "A007", "approval-rule-never-matches", "warning", "A condition no call can satisfy.",
    "The values the parameter can take (an enum, such as the commands a shell toolset runs) never "
    "satisfy the condition, or it tests membership in an empty list; the rule can never match.")
RAW_PATH_CONDITION: Final = _rule(
    "A008", "raw-path-condition", "warning", "A path glob on a tool whose arguments are not normalized.",
    "Stdlib toolsets resolve `..`, `.` and symbolic links before a rule sees a path, so "
    "`output/../src/x.py` never passes for `output/**`. Python tools are judged on their arguments as "
    "given: a path-like glob on them can be dodged, so check paths inside the tool.")
UNENFORCEABLE_CONDITION: Final = _rule(
    "A009", "unenforceable-condition", "error", "A condition on tools whose parameters are known only at run time.",
    "The tools of an opaque toolset are found when a run starts, so the build cannot check a "
    "condition on them and the runtime could not apply it as written. A restriction that cannot be "
    "enforced is an error, never a silent no-op: name the tools, or gate the toolset as a whole.")
RULE_CANNOT_ALLOW: Final = _rule(
    "A010", "rule-cannot-allow", "warning", "An allow rule for a tool that is always asked.",
    "Some tools are asked on every call whatever the rules say: `worker_create` (and `agent_create`) "
    "write a new worker into the project, so a person (or the run's approval mode) must answer each "
    "one. An allow rule naming it does not apply to it; ask and deny rules do.")
PATH_GLOB_OUTSIDE_ROOT: Final = _rule(
    "A011", "path-glob-outside-root", "warning", "A path glob that cannot match what it names inside the toolset's root.",
    "A rule sees a stdlib tool's path as the tool receives it: relative to the toolset's root (its "
    "`path` setting) and normalized, with `..`, `.` and symbolic links resolved and no leading or "
    "trailing `/`. Under `path: notes` the file notes/secret.txt is `secret.txt`, so "
    "`deny write_file(path ~ 'notes/secret*')` names notes/notes/secret* and never denies it. A glob "
    "that repeats the root, is absolute, has `.` or `..` segments or ends in `/` is reported at the "
    "glob, with the glob that matches what it names as the hint. The approval question, "
    "`capabilities` and `diff` name the root beside the path and the rules.")
POSITIONAL_ARGV_RULE: Final = _rule(
    "A012", "positional-argv-rule", "warning", "A rule tests one position of a shell command line against an operand.",
    "Rules see shell's `argv` normalized: the command, its operands in order (paths resolved, the "
    "destination last), then its flags. `argv[1]` is the first operand whatever flags are given, "
    "but a command that takes several operands puts a path at any later position: "
    "`deny shell(argv[1] == 'secret.txt')` misses `cat notes.txt secret.txt`. Test every position with "
    "`argv[*]` (any element): `deny shell(argv[*] == 'secret.txt')`. Positions a command fixes in every "
    "spelling (mv takes one source: `argv[1]` is what moves and `argv[2]` where to; git's "
    "subcommand is `argv[1]`) are not reported when the rule pins the command with `argv[0] == ...`.")
# --- R: review of capabilities
UNAPPROVED_SIDE_EFFECT: Final = _rule(
    "R001", "unapproved-side-effect", "warning", "A side effect the entry can reach with no approval on the way.",
    "A capability that changes something outside the run (fs.write, proc.exec, custom:NAME for "
    "Python tools, what Python declares) is reachable from the entry through a path on which no "
    "tool and no call needs approval, so a model can use it with nobody asked. `llm-do "
    "capabilities` shows every path. Ask for it (`ask TOOL` in the worker that has the tool, or "
    "`ask WORKER` on a call on the way). A Python tool that only reads says so in its module's "
    "literal `CAPABILITIES` entry, its complete declaration (`{\"count_todos\": [\"fs.read:project/**\"]}`): "
    "then its `custom:NAME` is no side effect and R001 leaves that tool alone, while it still warns of "
    "the others. Suppress R001 only when no unasked side effect should be reported in the project.")
WRITE_THROUGH_DELEGATION: Final = _rule(
    "R002", "write-through-delegation", "warning", "A worker without a write tool of its own can write through a callee.",
    "Privilege through delegation: the worker has no fs.write capability itself, but a worker it "
    "may call (directly or further down) has one, so what the worker is told can end up written. "
    "Gate the call (`ask WORKER`), drop the callee, or suppress R002 when that is the design.")
ARMED_TRIFECTA: Final = _rule(
    "R003", "armed-trifecta", "warning", "A worker can read private data, take in untrusted content and send data out, with nobody asked.",
    "The lethal trifecta: content a third party wrote (an MCP tool's result, a web page, a file "
    "in a folder others fill, the run's input) can steer the model into sending private data (a "
    "read of the project, a secret) where others can read it (an MCP server, the network, a "
    "published folder). The worker holds all three legs through its tools and the workers it "
    "calls, and the egress leg is reachable with no `ask` on the way. There is one diagnostic at "
    "each tool that gives an armed egress (all at once), naming the three least gated paths. Ask for the egress (`ask "
    "TOOL`, or `ask WORKER` on a call on the way), drop a leg, or accept the flow in project.json "
    "(`flows.accept`: the worker, the legs and a reason), which reviewers see in `diff`.")
PROVIDER_TRIFECTA: Final = _rule(
    "R004", "provider-trifecta", "error", "A lethal trifecta whose egress is a server-side tool, which no approval can gate.",
    "A server-side tool (`web_search`, `web_fetch`) is run by the model's provider: it returns "
    "content anyone can write and its requests carry what the model puts in them, and no run-time "
    "gate can ask before it. A worker that also reads private data and takes in untrusted "
    "content can be steered into leaking it through the tool's requests. The diagnostic is at the "
    "`server_side_tools` item of the worker whose model runs the tool. Move the web tool to a "
    "worker without private reads, or accept the flow in project.json (`flows.accept`) with a reason.")
GATED_TRIFECTA: Final = _rule(
    "R005", "gated-trifecta", "info", "A worker holds the lethal trifecta, with its egress behind approval.",
    "The worker can read private data, take in untrusted content and send data out, but every "
    "path to the egress passes an `ask` (or is denied): a person answers before anything leaves. "
    "One note per tool that gives the egress, naming the first worker and how many more pass it.")
UNUSED_FLOW_ACCEPTANCE: Final = _rule(
    "R006", "unused-flow-acceptance", "warning", "A flow acceptance in project.json that accepts no flow.",
    "`flows.accept` names a worker and the capabilities of each leg. An entry for a worker that "
    "does not exist or holds no trifecta accepts nothing; an entry that leaves a combination of "
    "legs unnamed (the egress reachable with nobody asked, or, when every egress is behind `ask`, "
    "those: the run's guard asks them and `--approve-all` answers no such question) does not accept the flow: the message "
    "names the capabilities left and the hint the entry that would accept the flow. Such an entry "
    "is inert at run time too (the bundle marks it and the taint guard does not honour it). `llm-do "
    "capabilities` lists each worker's flows and every capability of each leg.")
UNDECLARED_THIRD_PARTY_CALLS: Final = _rule(
    "R007", "undeclared-third-party-calls", "info",
    "A Python tool without a CAPABILITIES entry that calls third-party code the effect scan does not know.",
    "A Python tool that declares nothing is labelled by what its code does, read with `ast`: the effects "
    "table knows the standard library's and the common HTTP clients' calls, not every client library. "
    "A call into an installed module outside the standard library and the project (`slack_sdk.WebClient`, "
    "`boto3.client`, `openai.OpenAI`), other than a few that parse, validate or compute with no I/O of their "
    "own (pydantic, yaml, dateutil, ...), may send what it is given anywhere, so the tool's flow labels count "
    "it as a connection: untrusted and egress. The diagnostic is at the first such call and names them all. "
    "Declare what the tool does in its module's `CAPABILITIES` (`{\"notify\": [\"net:slack.com\"]}`, or `[]`), "
    "its complete declaration, which the labels then follow instead of the scan.")
DECLASSIFYING_CALLEE: Final = _rule(
    "R011", "declassifying-callee", "info", "A worker whose output can carry no free text: its callers take in no untrusted content from it.",
    "The worker reads content a third party wrote, but its output schema holds only numbers, "
    "booleans, enumerated values, dates and times, e-mail addresses and strings held to an "
    "anchored pattern without spaces (at most 256 characters): it can tell its caller facts, not "
    "words. So the frames of the workers that call it do not become untrusted through it (the "
    "\"dual LLM\" pattern), and a later egress there is not asked because of what it read. The "
    "runtime checks each output against the schema before dropping the label. The note is at "
    "the worker's `schema_out_ref`, naming what it reads and who calls it.")
CONFINED_EGRESS: Final = _rule(
    "R012", "confined-egress", "info", "An approval rule that holds an egress to destinations it names: the calls it allows are no egress.",
    "The tool says where it sends (`to:PARAM` in its module's `CAPABILITIES`) and the rule's "
    "condition holds that parameter to values it names (`==`, `in [...]`, `~ 'GLOB'`, the same of "
    "every element of a list (`recipients[all] ~ 'GLOB'`, not `[*]`, which names one), and an "
    "`and` with one of them, an `or` of them; every destination parameter of the tool, if it "
    "names several): a call the rule allows goes only where the "
    "project says, so the flow guard does not count it as egress even from a frame that holds "
    "private data and untrusted content. Calls it does not allow are egress as before.")
UNKNOWN_DESTINATION: Final = _rule(
    "R013", "unknown-destination", "warning", "`to:PARAM` names no parameter of the tool.",
    "A Python tool's `CAPABILITIES` entry says where the tool sends with `to:PARAM`, but the "
    "tool has no parameter PARAM, so no approval rule can confine its egress by it. It is a "
    "typo or a stale declaration.")
FREE_TEXT_CALLEE: Final = _rule(
    "R014", "free-text-callee", "info", "A worker with an output schema that hands untrusted content to its callers.",
    "The worker reads content a third party wrote and declares an output schema, but a part of "
    "that schema can carry free text (a string without an enum, a date or e-mail format, or a "
    "pattern without spaces): what it read can reach its callers' frames, which become "
    "untrusted. The note says which part; narrow it to declassify (R011).")
QUARANTINED_UNCALLED: Final = _rule(
    "R015", "quarantined-uncalled", "info", "A quarantined worker that no worker's model calls: the key changes nothing.",
    "`quarantined: true` is about calls from a model: the model that calls the worker gets a "
    "reference to its output, never its words. A run's answer goes to the user whole, and Python "
    "code (a Python tool's `call_worker`, an entry function) gets the output itself, so on a "
    "worker that no worker lists in its `toolsets` the key has no effect. The note is at the key; "
    "list the worker in the toolsets of the worker that should call it, or remove the key.")
# --- L: the .agent era
LEGACY_KEY: Final = _rule(
    "L001", "legacy-key", "error", "A key of the `.agent` era that has no direct equivalent.",
    "The hint says what to write instead. `llm-do migrate` rewrites a project to .worker files.")
LEGACY_RECURSION: Final = _rule(
    "L002", "legacy-recursion", "warning", "A `.agent` worker on a call cycle.",
    "The .agent format cannot declare recursion, so the build accepts the cycle. Migrate the "
    "worker to a .worker file and add `recursive: true`.")
LEGACY_KEY_DEFAULT: Final = _rule(
    "L003", "legacy-key-default", "info", "A key of the `.agent` era set to what llm-do does anyway.",
    "The key has no place in today's format, but its value asks for nothing llm-do does not do "
    "already, so the build goes on without it. Remove it, or let `llm-do migrate` do so.")
LEGACY_PYTHON_CALL: Final = _rule(
    "L004", "legacy-python-call", "warning", "A `.agent` worker's Python calls a worker it does not declare.",
    "The .agent format had no `calls:`, so the build accepts the call and the run warns when it is "
    "made. Migrate the worker to a .worker file and list the worker under `calls:`; there an "
    "undeclared call is the error G005 and is refused at run time.")
# --- B: budgets (what a run can cost)
UNBOUNDED_COST: Final = _rule(
    "B001", "unbounded-cost", "warning", "A run can cost any amount: one request of a worker it reaches has no worst case.",
    "`lint` bounds what a run from the entry can cost before it starts. A run's requests are "
    "always counted (`request_limit`, 50 by default), so what is missing is a bound on one request: its input "
    "tokens (the model's context window, or `usage_limits.per_request_input_tokens_limit` with "
    "`count_tokens_before_request`), its output tokens (`max_tokens` in the worker's `model_settings`, or the "
    "context window), the uses of a provider-side tool billed per use (`max_uses` of `web_search`), or a "
    "model billed by something no limit counts (seconds of audio). The message names the worker, its model "
    "and what is missing; `llm-do capabilities` shows the bound of every worker.")
UNPRICED_MODEL: Final = _rule(
    "B002", "unpriced-model", "warning", "A model with no known price: the cost of runs on it has no bound.",
    "Prices come from genai-prices, the release pinned with llm-do. A model it does not list (a local model, a "
    "fine-tune, a model newer than the release) has no price, so neither `capabilities` nor a run's `--max-cost` "
    "can count what it costs (a budgeted run refuses to call it). Declare its price in project.json: "
    "`\"cost\": {\"prices\": {\"ollama:llama3.2\": {\"input_mtok\": 0, \"output_mtok\": 0, \"context_window\": 128000}}}`.")
# --- C: configuration of the checks themselves
INVALID_SUPPRESSION: Final = _rule(
    "C001", "invalid-suppression", "warning", "`suppress` names a code that cannot be suppressed.",
    "A project may silence warning and info codes; errors always stay.")
RULE_NOT_RESOLVED_WITHOUT_IMPORT: Final = _rule(
    "C002", "rule-not-resolved-without-import", "info",
    "An approval rule that `--no-import` cannot resolve: it may match a tool made when a module runs.",
    "Read without importing (`--no-import`, as the CI recipe reads a pull request), a toolset whose "
    "tools are made by code (a `FunctionToolset` filled by `@toolset.tool` decorators) cannot be "
    "listed, so a rule whose name or glob matches none of the tools the text shows may still match "
    "one of its tools. It is not an error there: the rest of the project is checked and `diff "
    "--no-import` compares the rule as written. A build that imports the Python resolves it, and "
    "reports A002 if it matches nothing.")


CAUSE_ORDER = "PFYXLNSTMAGRBC"
"""Code groups in the order one's errors can cause another's: syntax, then files, then Python
imports, ..., the call graph last. Text output lists root causes first by this order."""

GROUPS = {
    "P": "syntax and structure of project.json and front matter",
    "F": "files and paths",
    "N": "names and references",
    "S": "schemas",
    "Y": "user Python",
    "X": "MCP servers",
    "T": "templates",
    "G": "the call graph",
    "M": "models",
    "A": "approvals",
    "R": "review of capabilities",
    "B": "cost bounds and prices",
    "L": "the .agent era",
    "C": "configuration of the checks themselves",
}
"""Each code group, by its letter, in the order `explain` lists them."""


def cause_rank(code: str) -> int:
    return CAUSE_ORDER.index(code[0]) if code[:1] in CAUSE_ORDER else len(CAUSE_ORDER)


def rule(code: str) -> Rule | None:
    """The rule a code (`G001`, `g001`) or a name (`undeclared-recursion`) stands for."""
    found = RULES.get(code.upper())
    if found is None:
        found = next((r for r in RULES.values() if r.name == code.lower().replace("_", "-")), None)
    return found
