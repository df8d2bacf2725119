"""The stdlib registry is a table of names whose descriptors load on first lookup."""

from __future__ import annotations

import subprocess
import sys

from llm_do.stdlib.registry import STDLIB_TOOLSETS, stdlib_toolset


def test_every_name_looks_up_the_descriptor_of_that_name() -> None:
    assert list(STDLIB_TOOLSETS) == ["filesystem_project", "filesystem_project_ro", "filesystem_cwd", "filesystem_cwd_ro",
                                     "shell_readonly", "shell_file_ops", "worker_create", "dynamic_agents"]
    for name in STDLIB_TOOLSETS:
        assert STDLIB_TOOLSETS[name].name == name
        assert stdlib_toolset(name) is STDLIB_TOOLSETS[name]
    assert "nope" not in STDLIB_TOOLSETS and stdlib_toolset("nope") is None


def test_looking_up_one_toolset_loads_only_its_descriptor() -> None:
    probe = ("import sys; from llm_do.stdlib.registry import STDLIB_TOOLSETS; "
             "assert 'shell_readonly' in STDLIB_TOOLSETS and len(STDLIB_TOOLSETS) == 8; "
             "STDLIB_TOOLSETS['filesystem_project_ro']; "
             "print(sorted(m for m in sys.modules if m.startswith('llm_do.stdlib.') and m.endswith(('descriptor', 'definition', 'commands'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['llm_do.stdlib.descriptor',", "'llm_do.stdlib.filesystem.descriptor']"]
