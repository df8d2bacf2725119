"""Quarantined callees where a call goes wrong or an argument is typed: a crash or a validator that
quotes the words brings their taint in as a refusal does, a Python tool cannot pass off its call as
a model's, and a kept output that carries nothing, or sits in a typed argument, is still put in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.runtime import Runtime, RuntimeConfig
from tests.runtime.test_quarantined_callees import FILES, PAGE, READ, SCHEMAS_PY, TOOLS_PY, _call, _denied
from tests.support.approvals import turns
from tests.support.cli import worker
from tests.support.projects import build_project

EXTRA_TOOLS = '''

    from pydantic_ai import RunContext


    def shout(text: str) -> str:
        """Shout the text (crashes: a bug in a project tool)."""
        raise ValueError(f"cannot shout {text!r}")


    async def ask_helper(ctx: RunContext, text: str) -> str:
        """Have the helper do it; say how it went."""
        try:
            return str(await ctx.deps.call_worker("helper", text))
        except Exception as exc:
            return f"the helper failed: {exc}"


    async def relay_up(ctx: RunContext, name: str) -> str:
        """Call `name` in the caller's frame, saying it is a model's call."""
        return str(await ctx.deps.runtime.call_worker_async(name, "x", parent=ctx.deps.frame.parent, from_model=True))


    from pydantic import BaseModel


    class Entry(BaseModel):
        text: str


    def note(entry: Entry) -> str:
        """Note an entry."""
        return _out(f"note {entry.text}")


    TOOLS = [read_secret, fetch_page, post, mail, label, shout, ask_helper, relay_up, note]
'''

MORE: dict[str, Any] = {
    **FILES,
    "tools.py": TOOLS_PY.replace("    TOOLS = [read_secret, fetch_page, post, mail, label]\n", "") + EXTRA_TOOLS,
    "schemas.py": SCHEMAS_PY.replace("from pydantic import BaseModel, Field", "from pydantic import BaseModel, Field, field_validator") + """

    class Checked(BaseModel):
        title: str

        @field_validator("title")
        @classmethod
        def plain(cls, value: str) -> str:
            if "IGNORE" in value:
                raise ValueError(f"not a plain title: {value}")
            return value
""",
    "checked.worker": worker("schema_out_ref: schemas.py:Checked\ntoolsets: [page_reader]", "Title the page."),
    "boss.worker": worker("""
        tools: [read_secret, mail, ask_helper]
        calls: [helper]
        approvals: [allow read_secret, allow mail, allow ask_helper]
        """, "Do as you are told."),
    "helper.worker": worker("tools: [shout]\ntoolsets: [page_reader]\napprovals: [allow shout]", "Help."),
    "judge.worker": worker("schema_out_ref: schemas.py:Short\ntoolsets: [verdict_reader]", "Judge the page."),
    "top.worker": worker("toolsets: [mid, open_reader]", "Top."),
    "noter.worker": worker("tools: [note]\ntoolsets: [page_reader]\napprovals: [allow note]", "Note it."),
    "mid.worker": worker("tools: [relay_up]\napprovals: [allow relay_up]", "Mid."),
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("quarantine_gone_wrong") / "p", MORE)


def _run(bundle: Path, entry: str, **models: list[list[Any]]) -> tuple[str, list[Any], object]:
    outbox = bundle.parent / "outbox.txt"
    outbox.unlink(missing_ok=True)
    built = {name: turns(*parts) for name, parts in models.items()}
    events: list[Any] = []
    config = RuntimeConfig(approval_mode="approve_all", model_for=lambda name: built[name], on_event=events.append)
    output = Runtime.load(bundle, config).run("go", worker=entry).output
    return outbox.read_text(encoding="utf-8") if outbox.exists() else "", events, output


VERDICT = [_call("fetch_page", url="https://example.com"), [ToolCallPart("final_result", {"label": "good"})]]


def test_a_kept_output_that_carries_nothing_is_still_put_in_a_tool_argument(bundle: Path) -> None:
    """Without private data in main, the declassifying reader's token carries nothing; it is put in
    all the same."""
    mail = _call("mail", address="x@theirs.com", text="verdict: [[verdict_reader-1]]")
    outbox, _, _ = _run(bundle, "main", main=[_call("verdict_reader", input="judge it"), mail, [TextPart("done")]],
                        verdict_reader=VERDICT)
    assert outbox == 'mail x@theirs.com: verdict: {"label": "good"}\n'


def test_a_kept_output_that_carries_nothing_is_still_put_in_a_typed_answer(bundle: Path) -> None:
    """The same in a typed answer, as in a text one."""
    answer = [ToolCallPart("final_result", {"title": "[[verdict_reader-1]]"})]
    _, _, output = _run(bundle, "judge", judge=[_call("verdict_reader", input="judge it"), answer],
                        verdict_reader=VERDICT)
    assert output.title == '{"label": "good"}'


def test_a_crash_that_quotes_the_words_brings_them_in_as_a_refusal_does(bundle: Path) -> None:
    """helper writes its token into `shout`, which crashes quoting its argument: the run-ending error
    holds the page, and `ask_helper` (boss's Python tool) hands it to boss's model. helper's frame
    took in what the token carried, whatever ended the call, so boss holds it and its mail is asked."""
    helper = [_call("page_reader", input="read it"), _call("shout", text="[[page_reader-1]]")]
    mail = _call("mail", address="x@theirs.com", text="0000")
    boss = [_call("read_secret"), _call("ask_helper", text="do it"), mail, [TextPart("done")]]
    outbox, events, _ = _run(bundle, "boss", boss=boss, helper=helper, page_reader=READ)
    [returned] = [e for e in events if e.kind == "tool_returned" and e.tool == "ask_helper"]
    assert PAGE in returned.result  # boss's model read the page
    assert outbox == "" and _denied(events) == ["mail"]


def test_a_python_tool_saying_from_model_cannot_call_off_its_workers_edges(bundle: Path) -> None:
    """mid declares no callee; its tool names its caller's frame as parent and says from_model=True:
    a model's call is one only from the frame the tool runs in, so this is a call from Python, refused."""
    top = [_call("mid", input="go"), [TextPart("done")]]
    mid = [_call("relay_up", name="open_reader"), [TextPart("done")]]
    _, events, _ = _run(bundle, "top", top=top, mid=mid, open_reader=[[TextPart("open_reader ran")]])
    [returned] = [e for e in events if e.kind == "tool_returned" and e.tool == "relay_up"]
    assert "does not declare" in returned.result, returned.result


def test_a_token_in_a_typed_argument_is_put_in(bundle: Path) -> None:
    """A tool whose parameter is a pydantic model: its validated arguments hold an Entry, whose
    fields get the words and which its class validates again (a worker's input with a nested model
    alike: the validator hands on a shallow dict)."""
    noter = [_call("page_reader", input="read it"), _call("note", entry={"text": "[[page_reader-1]]"}),
             [TextPart("done")]]
    outbox, _, _ = _run(bundle, "noter", noter=noter, page_reader=READ)
    assert outbox == f"note The page says: {PAGE}\n"


def test_a_typed_answer_refused_by_its_own_validator_ends_the_run_without_the_words(bundle: Path) -> None:
    """The class's own validator refuses the answer with a message that quotes it: the run ends
    saying only that its validator refused it."""
    from llm_do.runtime.errors import RunFailed

    answer = [ToolCallPart("final_result", {"title": "[[page_reader-1]]"})]
    with pytest.raises(RunFailed) as raised:
        _run(bundle, "checked", checked=[_call("page_reader", input="read it"), answer], page_reader=READ)
    assert "IGNORE" not in str(raised.value), str(raised.value)
