"""The effects a piece of Python can have, read off its calls with `ast` (never run).

A table of call names per effect: a reviewer learns from `diff` that a tool's code now writes,
deletes, starts processes, opens connections or reads the environment. The scan is cheap and
shallow on purpose: it sees calls written in the code (through import aliases), not calls made
by name at run time (`getattr`, `eval`), nor what an installed library does inside. An effect is
a hint for the reviewer, never a permission: capabilities and approvals still decide what runs.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

WRITE = "fs.write"
DELETE = "fs.delete"
PROCESS = "proc.exec"
NETWORK = "net"
ENVIRONMENT = "env.read"
EFFECTS = (WRITE, DELETE, PROCESS, NETWORK, ENVIRONMENT)
"""Every effect, in the order reports list them."""

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


def call_effect(call: ast.Call, aliases: Mapping[str, str]) -> str | None:
    """The effect of one call, or None."""
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
            effect = call_effect(child, aliases)
            if effect is not None:
                found.add(effect)
        elif isinstance(child, ast.Attribute | ast.Name) and isinstance(child.ctx, ast.Load):
            name = dotted(child)
            if name is not None and qualified(name, aliases) in NAMES:
                found.add(NAMES[qualified(name, aliases)])
    return [e for e in EFFECTS if e in found]
