"""The files `llm-do init --worker NAME` writes: a directory worker with one sample Python tool,
and the script turns in which it calls that tool (language.md, Directory workers)."""

from __future__ import annotations

from typing import Any

WORKER = """\
---
description: Counts the words of the text it is given.
tools:
  - count_words
---
You count words. Call count_words with the text you are given, then answer with the count.
"""

TOOLS = '''\
"""{name}'s own tools: only the worker in this directory can use them."""


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


TOOLS = [count_words]
'''

MAIN_WORKER = """\
---
description: Answers the request it is given, counting words with {name}.
toolsets:
  - {name}
---
You answer requests about text. To count the words of a text, call {name} with it.
"""

SAMPLE_TEXT = "Projects are programs and workers are functions."


def worker_turns() -> list[dict[str, Any]]:
    """The directory worker's turns: it calls its tool, then answers."""
    return [
        {"tool_calls": [{"tool": "count_words", "args": {"text": SAMPLE_TEXT}}]},
        {"text": "7 words."},
    ]


def script(name: str) -> dict[str, Any]:
    """A whole run: main calls the directory worker, which calls its tool."""
    return {
        "workers": {
            "main": [
                {"tool_calls": [{"tool": name, "args": {"input": SAMPLE_TEXT}}]},
                {"text": f"{name} counted 7 words."},
            ],
            name: worker_turns(),
        }
    }


def worker_files(name: str) -> dict[str, str]:
    """workers/NAME/worker.worker and workers/NAME/tools.py, by path relative to the project."""
    return {f"workers/{name}/worker.worker": WORKER, f"workers/{name}/tools.py": TOOLS.format(name=name)}


def listing_worker_file(manifest: str, start: int, worker_file: str) -> str:
    """project.json's text with `worker_file` appended to the `worker_files` list whose `[` is at
    offset `start`; the rest of the text, the items' layout included, stays as it was."""
    import json

    from llm_do.compiler.syntax.brackets import closing_bracket

    end = closing_bracket(manifest, start)
    if end is None:
        raise ValueError("the worker_files list does not close")
    body = manifest[start + 1 : end]
    quoted = json.dumps(worker_file, ensure_ascii=False)
    if not body.strip():
        return manifest[: start + 1] + quoted + manifest[end:]
    lead = body[: len(body) - len(body.lstrip())]
    after_last = start + 1 + len(body.rstrip())
    return manifest[:after_last] + "," + (lead if "\n" in lead else " ") + quoted + manifest[after_last:]
