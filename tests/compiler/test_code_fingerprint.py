"""Fingerprints and effects of a project's Python, read with `ast` (llm_do.compiler.code)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from llm_do.compiler.code.effects import effects_of
from llm_do.compiler.code.fingerprint import CodeIndex, entry_code, tool_code, toolset_code
from llm_do.compiler.code.module_code import dump

TOOLS = '''
"""Tools."""

import json
from pathlib import Path

from lib.util import shout

LIMIT = 10
OTHER = 3


def _trim(text: str) -> str:
    return text[:LIMIT]


def first(text: str) -> str:
    """The first tool."""
    return _trim(text)


def second(text: str) -> str:
    """The second tool."""
    return shout(text) + str(OTHER)


TOOLS = [first, second]
'''
UTIL = '''
def shout(text: str) -> str:
    return text.upper()
'''


def _index(**files: str) -> CodeIndex:
    """Project files by module name, `lib.util` written `lib_util` (`lib` is a package)."""
    texts = {name.replace("_", "/") + ".py": textwrap.dedent(text) for name, text in files.items()}
    texts["lib/__init__.py"] = ""
    return CodeIndex(texts.get)


def _fingerprints(tools: str, util: str = UTIL) -> dict[str, str]:
    index = _index(tools=tools, lib_util=util)
    out = {}
    for tool in ("first", "second"):
        code = tool_code(index, "tools.py", tool)
        assert code is not None
        out[tool] = code["fingerprint"]
    return out


def test_a_tool_is_its_function_what_it_reaches_by_name_and_the_project_modules_it_imports() -> None:
    index = _index(tools=TOOLS, lib_util=UTIL)
    first, second = tool_code(index, "tools.py", "first"), tool_code(index, "tools.py", "second")
    assert first is not None and second is not None
    assert first["function"] == "tools.py:first"
    assert sorted(first["parts"]) == ["tools.py:LIMIT", "tools.py:_trim", "tools.py:first"]
    assert sorted(second["parts"]) == ["lib/__init__.py", "lib/util.py", "tools.py:OTHER", "tools.py:second"]


@pytest.mark.parametrize(("old", "new", "changed"), [
    ("return _trim(text)", "return _trim(text) + '!'", {"first"}),  # one tool's body
    ("LIMIT = 10", "LIMIT = 11", {"first"}),  # a constant only `first` reads
    ("OTHER = 3", "OTHER = 4", {"second"}),
    ("TOOLS = [first, second]", "TOOLS = [first, second]\nEXTRA = 1", set()),  # nothing reads it
    ('"""The first tool."""', '"""The first tool, described otherwise."""', set()),  # the description
    ("    return text[:LIMIT]", "    # cut\n    return text[ : LIMIT ]  # trailing", set()),  # layout, comments
])
def test_editing_one_tool_flags_only_the_tools_that_reach_the_change(old: str, new: str, changed: set[str]) -> None:
    before = _fingerprints(TOOLS)
    after = _fingerprints(TOOLS.replace(old, new))
    assert {t for t in before if before[t] != after[t]} == changed


def test_an_imported_project_module_counts_for_the_tools_that_use_it() -> None:
    before, after = _fingerprints(TOOLS), _fingerprints(TOOLS, UTIL.replace("upper", "lower"))
    assert (before["first"] == after["first"], before["second"] == after["second"]) == (True, False)


def test_what_an_imported_name_means_is_part_of_the_code() -> None:
    safe = "from os.path import exists as check\n\n\ndef first(p: str) -> bool:\n    return check(p)\n\n\nTOOLS = [first]\n"
    risky = safe.replace("os.path import exists", "os import remove")
    a, b = tool_code(_index(tools=safe), "tools.py", "first"), tool_code(_index(tools=risky), "tools.py", "first")
    assert a is not None and b is not None
    assert a["fingerprint"] != b["fingerprint"]
    assert (a["effects"], b["effects"]) == ([], ["fs.delete"])


def test_a_tool_listed_by_another_name_or_imported_from_another_module_is_traced_to_its_def() -> None:
    impl = "import subprocess\n\n\ndef run(cmd: str) -> None:\n    subprocess.run(cmd)\n"
    tools = "from pydantic_ai import Tool\n\nfrom impl import run\n\nTOOLS = [Tool(run, name='shell')]\n"
    code = tool_code(_index(tools=tools, impl=impl), "tools.py", "shell")
    assert code is not None
    assert (code["function"], code["effects"]) == ("impl.py:run", ["proc.exec", "computed"])  # a command not written out


def test_a_tool_ast_cannot_trace_counts_its_whole_module() -> None:
    tools = "def make():\n    return lambda text: text\n\n\nTOOLS = {'echo': make()}\n"
    code = tool_code(_index(tools=tools), "tools.py", "echo")
    assert code is not None
    assert (code["function"], sorted(code["parts"])) == (None, ["tools.py"])


def test_the_entry_function_and_its_module_level_code() -> None:
    flow = "import os\n\nos.makedirs('out')\n\n\nasync def main(ctx, text: str) -> str:\n    return text\n"
    code = entry_code(_index(flow=flow), "flow.py", "main")
    assert code is not None
    assert sorted(code["parts"]) == ["flow.py:<module>", "flow.py:main"]
    assert code["effects"] == ["fs.write"]  # module-level code runs on import


@pytest.mark.parametrize(("source", "effects"), [
    ("open(p)", []),
    ("open(p, 'r')", []),
    ("open(p, 'w')", ["fs.write"]),
    ("open(p, mode)", ["fs.write"]),
    ("Path(p).open('a')", ["fs.write"]),
    ("Path(p).write_text(t)", ["fs.write"]),
    ("shutil.rmtree(p)", ["fs.delete"]),
    ("Path(p).unlink()", ["fs.delete"]),
    ("import subprocess as sp\nsp.check_output(['ls'])", ["proc.exec"]),
    ("from subprocess import run\nrun(['ls'])", ["proc.exec"]),
    ("os.execvp('ls', [])", ["proc.exec"]),
    ("import httpx\nhttpx.AsyncClient()", ["net"]),
    ("from urllib.request import urlopen\nurlopen(u)", ["net"]),
    ("socket.socket()", ["net"]),
    ("os.environ['TOKEN']", ["env.read"]),
    ("from os import environ\nenviron.get('TOKEN')", ["env.read"]),
    ("os.getenv('TOKEN')", ["env.read"]),
    ("text.replace('a', 'b')", []),
    # issue 30: a call whose target is computed may delete, run or connect (it was no effect at all)
    ("getattr(os, name)(p)", ["computed"]),
    ("getattr(shutil, 'rmtree')(p)", ["fs.delete"]),
    ("getattr(self, name)()", []),
    ("import importlib\nimportlib.import_module(name)", ["computed"]),
    ("from importlib import import_module\nimport_module(name)", ["computed"]),
    ("import importlib\nimportlib.metadata.version('llm-do')", []),
    ("__import__(name)", ["computed"]),
    ("exec(text)", ["computed"]),
    ("eval(text)", ["computed"]),
    ("import ctypes\nctypes.CDLL(None).unlink(p)", ["fs.delete", "computed"]),
    ("globals()[name](p)", ["computed"]),
    ("os.__dict__[name](p)", ["computed"]),
    ("import subprocess\nsubprocess.run(['git', 'log', ref])", ["proc.exec"]),
    ("import subprocess\nsubprocess.run(command)", ["proc.exec", "computed"]),
    ("import subprocess\nsubprocess.run(['sh', '-c', script])", ["proc.exec", "computed"]),
    ("import subprocess\nsubprocess.run(f'ls {p}', shell=True)", ["proc.exec", "computed"]),
    ("os.system('ls')", ["proc.exec"]),
])
def test_effects_are_read_off_call_names(source: str, effects: list[str]) -> None:
    code = "import os, shutil, socket\nfrom pathlib import Path\n" + source
    index = _index(m=code)
    module = index.module("m.py")
    assert module is not None
    assert effects_of(ast.parse(code), module.aliases) == effects


def test_the_dump_leaves_out_empty_fields_so_every_python_hashes_alike() -> None:
    text = dump(ast.parse("def f(a):\n    return a\n"))
    assert "type_params" not in text and "lineno" not in text and "None" not in text


KITS = '''
from pydantic_ai import FunctionToolset

from lib.util import shout

decorated = FunctionToolset()


def _helper(text: str) -> str:
    return text.strip()


def build_calc(ctx):
    calc = FunctionToolset()

    @calc.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    return calc


@decorated.tool_plain
def loud(text: str) -> str:
    return shout(text)


def plain(text: str) -> str:
    return _helper(text)


TOOLSETS = {"calc": build_calc, "plain": FunctionToolset([plain]), "decorated": decorated}
'''


def _toolset_fingerprints(text: str, util: str = UTIL) -> dict[str, str]:
    index = _index(kits=text, lib_util=util)
    out = {}
    for key in ("calc", "plain", "decorated"):
        code = toolset_code(index, "kits.py", key)
        assert code is not None and code["function"] is None
        out[key] = code["fingerprint"]
    return out


def test_editing_one_toolsets_tools_does_not_flag_another() -> None:
    """A `TOOLSETS` toolset was fingerprinted as its whole module: editing `plain`'s helper flagged
    `calc` and `decorated` too. Each is now what its value reaches, decorated tools included."""
    before = _toolset_fingerprints(KITS)
    helper = _toolset_fingerprints(KITS.replace("text.strip()", "text.strip().lower()"))
    assert [k for k in before if before[k] != helper[k]] == ["plain"]
    nested = _toolset_fingerprints(KITS.replace("return a + b", "return a - b"))
    assert [k for k in before if before[k] != nested[k]] == ["calc"]
    loud = _toolset_fingerprints(KITS.replace("return shout(text)", "return shout(text) + '!'"))
    assert [k for k in before if before[k] != loud[k]] == ["decorated"]
    util = _toolset_fingerprints(KITS, UTIL.replace("upper()", "lower()"))
    assert [k for k in before if before[k] != util[k]] == ["decorated"]


def test_a_toolsets_value_code_cannot_trace_counts_the_whole_module() -> None:
    built = KITS.replace('TOOLSETS = {"calc"', 'TOOLSETS = dict(calc=build_calc) or {"calc"')
    before = _toolset_fingerprints(built)
    after = _toolset_fingerprints(built.replace("text.strip()", "text.strip().lower()"))
    assert all(before[k] != after[k] for k in before)
