"""The effects a piece of Python can have, read off its calls with `ast` (never run).

A table of call names per effect: a reviewer learns from `diff` that a tool's code now writes,
deletes, starts processes, opens connections or reads the environment. The scan is cheap and
shallow on purpose: it sees calls written in the code (through import aliases), not what an
installed library does inside. A call whose target the text does not say (`getattr(os, name)`,
`importlib.import_module`, `__import__`, `exec`/`eval`, `ctypes`, a process whose command is
computed) is the effect `computed`: it may delete, run or connect, and the review ranks it as
such an unknown effect rather than pretend the code does nothing. An effect is a hint for the
reviewer, never a permission: capabilities and approvals still decide what runs.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

WRITE = "fs.write"
DELETE = "fs.delete"
PROCESS = "proc.exec"
NETWORK = "net"
ENVIRONMENT = "env.read"
COMPUTED = "computed"
"""A call whose target is computed at run time: it may delete, run or connect (`EFFECT_TEXT`)."""
EFFECTS = (WRITE, DELETE, PROCESS, NETWORK, COMPUTED, ENVIRONMENT)
"""Every effect, in the order reports list them."""
EFFECT_TEXT = {COMPUTED: "computed call: may delete, run or connect"}
"""How a report names an effect whose name alone does not say it."""

CALLS: Mapping[str, str] = {
    **dict.fromkeys(("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move",
                     "shutil.copyfileobj", "os.rename", "os.renames", "os.replace", "os.mkdir", "os.makedirs",
                     "os.symlink", "os.link", "os.truncate", "os.write", "os.chmod", "os.chown",
                     "tempfile.mkstemp", "tempfile.mkdtemp", "tempfile.NamedTemporaryFile"), WRITE),
    **dict.fromkeys(("os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree"), DELETE),
    **dict.fromkeys(("os.system", "os.popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp",
                     "pty.spawn", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"), PROCESS),
    **dict.fromkeys(("asyncio.open_connection", "asyncio.start_server", "urllib.request.urlopen",
                     "urllib.request.urlretrieve", "urllib.request.build_opener", "logging.handlers.HTTPHandler",
                     "logging.handlers.SMTPHandler", "logging.handlers.SocketHandler",
                     "logging.handlers.DatagramHandler", "logging.handlers.SysLogHandler"), NETWORK),
    **dict.fromkeys(("os.getenv", "os.getenvb", "os.putenv", "os.unsetenv", "dotenv.load_dotenv",
                     "dotenv.dotenv_values"), ENVIRONMENT),
}
"""Fully qualified call names (after import aliases are resolved) and the effect of each."""

MODULES: Mapping[str, str] = {
    "subprocess": PROCESS,
    "socket": NETWORK, "ssl": NETWORK, "requests": NETWORK, "httpx": NETWORK, "aiohttp": NETWORK,
    "urllib3": NETWORK, "http.client": NETWORK, "smtplib": NETWORK, "ftplib": NETWORK, "imaplib": NETWORK,
    "poplib": NETWORK, "telnetlib": NETWORK, "websockets": NETWORK, "websocket": NETWORK, "paramiko": NETWORK,
    "grpc": NETWORK, "xmlrpc.client": NETWORK, "xmlrpc.server": NETWORK, "http.server": NETWORK,
    "socketserver": NETWORK, "multiprocessing.connection": NETWORK, "webbrowser": NETWORK,
}
"""Modules any call into which has the effect (`subprocess.run`, `httpx.AsyncClient`)."""

PREFIXES: Mapping[str, str] = {"os.exec": PROCESS, "os.spawn": PROCESS}
"""Call-name prefixes (`os.execv`, `os.spawnlp`)."""

COMPUTED_CALLS = frozenset({
    "exec", "eval", "compile", "__import__", "builtins.exec", "builtins.eval", "builtins.compile", "builtins.__import__",
    "importlib.import_module", "importlib.__import__", "importlib.reload", "importlib.util.spec_from_file_location",
    "importlib.util.module_from_spec", "importlib.machinery.SourceFileLoader", "runpy.run_path", "runpy.run_module",
    "pydoc.locate",
})
"""Calls that run code, or import a module, the text does not name."""
COMPUTED_MODULES = ("ctypes", "cffi", "runpy")
"""Modules any call into which reaches code by name (a C function, a module chosen at run time)."""
COMMAND_CALLS: Mapping[str, int] = {
    "subprocess.run": 0, "subprocess.call": 0, "subprocess.check_call": 0, "subprocess.check_output": 0,
    "subprocess.Popen": 0, "subprocess.getoutput": 0, "subprocess.getstatusoutput": 0, "os.system": 0,
    "os.popen": 0, "asyncio.create_subprocess_exec": 0, "asyncio.create_subprocess_shell": 0,
}
"""Calls that start a process, and the position of their command: a command the text does not
spell (`subprocess.run(cmd)`, `["sh", "-c", script]`) may run anything."""
INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "cmd", "cmd.exe", "powershell", "pwsh", "python",
                          "python3", "node", "perl", "ruby", "env", "xargs"})
"""Programs that run what their arguments say: with an argument not written out, the command is computed."""
NAMESPACES = ("globals", "vars", "locals")
"""`globals()[name]`, `vars(os)[name]`: a name looked up at run time (so is `os.__dict__[name]`)."""

METHODS: Mapping[str, str] = {
    "write_text": WRITE, "write_bytes": WRITE, "mkdir": WRITE, "touch": WRITE, "symlink_to": WRITE,
    "hardlink_to": WRITE, "rename": WRITE, "unlink": DELETE, "rmdir": DELETE,
}
"""Method names of pathlib-like objects, whatever the receiver (`out.write_text(...)`)."""

NAMES: Mapping[str, str] = {"os.environ": ENVIRONMENT, "os.environb": ENVIRONMENT}
"""Names whose mere use has the effect (`os.environ["TOKEN"]`)."""

WRITE_MODE = frozenset("wax+")


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name; None for anything else (`f().x`)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def qualified(name: str, aliases: Mapping[str, str]) -> str:
    """`name` with its first part replaced by what it was imported as (`sp.run` -> `subprocess.run`)."""
    head, dot, rest = name.partition(".")
    target = aliases.get(head)
    return name if target is None else target + dot + rest


def _module_effect(name: str) -> str | None:
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        effect = MODULES.get(".".join(parts[:n]))
        if effect is not None:
            return effect
    return None


def _open_effect(call: ast.Call, mode_at: int) -> str | None:
    """`open(path, "w")`: a write when the mode (a literal, else unknown) can write."""
    mode = call.args[mode_at] if len(call.args) > mode_at else \
        next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return None
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not WRITE_MODE & set(mode.value):
        return None
    return WRITE


def _literal_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _computed_command(call: ast.Call, at: int) -> bool:
    """Whether the command of a process call is not written in the code: not a literal string,
    nor a literal list whose program is a literal (its arguments may vary)."""
    command = call.args[at] if len(call.args) > at else next((k.value for k in call.keywords if k.arg in ("args", "cmd")), None)
    if command is None or _literal_text(command):
        return False
    if isinstance(command, ast.List | ast.Tuple):
        if not command.elts or not _literal_text(command.elts[0]):
            return True
        program = command.elts[0]
        name = program.value if isinstance(program, ast.Constant) and isinstance(program.value, str) else ""
        return name.rsplit("/", 1)[-1] in INTERPRETERS and not all(_literal_text(e) for e in command.elts)
    return True


def _looked_up(node: ast.Subscript, aliases: Mapping[str, str]) -> bool:
    """`globals()[name]`, `vars(os)[name]`, `os.__dict__[name]`: a name chosen at run time."""
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in NAMESPACES:
        return not _literal_text(node.slice)
    if isinstance(value, ast.Attribute) and value.attr == "__dict__":
        owner = dotted(value.value)
        return owner is not None and owner.partition(".")[0] in aliases and not _literal_text(node.slice)
    return False


def _getattr_target(call: ast.Call, aliases: Mapping[str, str]) -> str | None:
    """`getattr(os, "remove")` -> `os.remove`; `getattr(os, name)` on an imported name -> `COMPUTED`."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) >= 2):
        return None
    owner = dotted(call.args[0])
    if owner is None or owner.partition(".")[0] not in aliases and owner not in ("builtins", "__builtins__"):
        return None  # an attribute of a local object (`getattr(self, name)`): not reached by name in a module
    attribute = call.args[1]
    if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
        return qualified(f"{owner}.{attribute.value}", aliases)
    return COMPUTED


def _computed_effect(call: ast.Call, full: str) -> str | None:
    if full in COMPUTED_CALLS or full.partition(".")[0] in COMPUTED_MODULES:
        return COMPUTED
    at = COMMAND_CALLS.get(full)
    return COMPUTED if at is not None and _computed_command(call, at) else None


def call_effects(call: ast.Call, aliases: Mapping[str, str]) -> list[str]:
    """The effects of one call: its named effect, and `COMPUTED` when its target is not written
    (`getattr(os, name)(path)`, `exec(text)`, `subprocess.run(cmd)`)."""
    found = [e for e in (call_effect(call, aliases),) if e is not None]
    name = dotted(call.func)
    if name is not None and (computed := _computed_effect(call, qualified(name, aliases))) is not None:
        found.append(computed)
    target = _getattr_target(call, aliases)
    if target == COMPUTED:
        found.append(COMPUTED)
    elif target is not None:  # a literal attribute: what calling it would do
        found += [e for e in (CALLS.get(target) or _module_effect(target),) if e is not None]
    return found


def call_effect(call: ast.Call, aliases: Mapping[str, str]) -> str | None:
    """The named effect of one call, or None."""
    name = dotted(call.func)
    if name is not None:
        full = qualified(name, aliases)
        if full in ("open", "io.open", "builtins.open", "os.fdopen"):
            return _open_effect(call, 1)
        effect = CALLS.get(full) or _module_effect(full)
        if effect is None:
            effect = next((e for prefix, e in PREFIXES.items() if full.startswith(prefix)), None)
        if effect is not None:
            return effect
    if isinstance(call.func, ast.Attribute):
        if call.func.attr == "open":
            return _open_effect(call, 0)
        return METHODS.get(call.func.attr)
    return None


def effects_of(node: ast.AST, aliases: Mapping[str, str]) -> list[str]:
    """The effects the code under `node` can have, in `EFFECTS` order."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            found.update(call_effects(child, aliases))
        elif isinstance(child, ast.Subscript) and _looked_up(child, aliases):
            found.add(COMPUTED)
        elif isinstance(child, ast.Attribute | ast.Name) and isinstance(child.ctx, ast.Load):
            name = dotted(child)
            if name is not None and qualified(name, aliases) in NAMES:
                found.add(NAMES[qualified(name, aliases)])
    return [e for e in EFFECTS if e in found]
