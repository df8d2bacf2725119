"""Host services and references: a tool using a service the host gave the run, a run refused before
any model call when a declared service is missing, reserved names, and payloads the model only
sees as a reference id and a glimpse while a tool resolves them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from llm_do.runtime import (
    InMemoryReferenceStore,
    Reference,
    References,
    Runtime,
    RuntimeConfig,
    ServiceProblem,
    Services,
    UnknownReference,
    run_worker,
)
from llm_do.runtime.references import GLIMPSE_CHARS, shorten
from llm_do.runtime.script import ScriptPlayer, load_script
from tests.support.cli import one_line_error, run_cli, worker, write_project
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project, copy_project

PAYLOAD = "QUARTERLY-FIGURES " * 400

TOOLS_PY = f'''
    from pydantic_ai import RunContext

    CAPABILITIES = {{"price": ["service:catalog"], "stock": ["service:catalog", "service:warehouse"]}}


    def price(ctx: RunContext, sku: str) -> str:
        """The price of a product, from the host's catalog (by key)."""
        return f"{{sku}} costs {{ctx.deps.services['catalog'].price(sku)}}"


    def stock(ctx: RunContext, sku: str) -> str:
        """Units in stock, from the host's warehouse (by attribute)."""
        return f"{{ctx.deps.services.warehouse[sku]}} units of {{sku}} ({{ctx.deps.services.catalog.price(sku)}} each)"


    def load_report(ctx: RunContext, quarter: str):
        """Load a quarterly report (big): the model gets a reference."""
        return ctx.deps.references.create({PAYLOAD!r}, kind="report", glimpse=f"the {{quarter}} report")


    def count_words(ctx: RunContext, ref: str) -> str:
        """Count the words of a stored report, given its reference id."""
        return f"{{len(ctx.deps.references.resolve(ref).split())}} words"


    TOOLS = {{"price": price, "stock": stock, "load_report": load_report, "count_words": count_words}}
'''

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"}},
    "tools.py": TOOLS_PY,
    "main.worker": worker("tools: [price, load_report, count_words]\ntoolsets: [clerk]\napprovals:\n  - allow *", "Answer."),
    "clerk.worker": worker("tools: [stock]\napprovals:\n  - allow stock", "Check stock."),
    "plain.worker": worker("", "Nothing to use."),
}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("services") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


class Catalog:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def price(self, sku: str) -> str:
        self.asked.append(sku)
        return {"A1": "3 EUR", "B2": "5 EUR"}[sku]


def scripted(script: Callable[..., Path], workers: dict[str, Any]) -> ScriptPlayer:
    return ScriptPlayer(load_script(script({"workers": workers})))


def tool_results(messages: list[Any]) -> list[tuple[str, str, str]]:
    return [(p.tool_name, p.outcome, p.model_response_str()) for m in messages for p in m.parts if p.part_kind == "tool-return"]


@pytest.mark.process
def test_a_tool_uses_the_services_the_host_gave(bundle: Path, script: Callable[..., Path]) -> None:
    catalog = Catalog()
    player = scripted(script, {
        "main": [{"tool_calls": [{"tool": "price", "args": {"sku": "A1"}}, {"tool": "clerk", "args": {"input": "B2?"}}]},
                 {"text": "done"}],
        "clerk": [{"tool_calls": [{"tool": "stock", "args": {"sku": "B2"}}]}, {"text": "7 in stock"}],
    })
    seen: list[tuple[str, list[Any]]] = []
    config = RuntimeConfig(model_for=player.model_for, services={"catalog": catalog, "warehouse": {"B2": 7}},
                           on_message=lambda w, d, m: seen.append((w, m)))
    result = run_worker(bundle, "go", config=config)
    assert result.output == "done"
    assert catalog.asked == ["A1", "B2"]
    assert ("price", "success", "A1 costs 3 EUR") in tool_results(result.messages)
    [(_, clerk_messages)] = [s for s in seen if s[0] == "clerk"]
    assert ("stock", "success", "7 units of B2 (5 EUR each)") in tool_results(clerk_messages)


@pytest.mark.process
def test_the_bundle_records_which_tool_needs_which_service(bundle: Path) -> None:
    doc = json.loads(bundle.read_text(encoding="utf-8"))
    grants = [g for g in doc["workers"]["clerk"]["capabilities"] if g["capability"].startswith("service:")]
    assert grants == [{"capability": "service:catalog", "tool": "stock"}, {"capability": "service:warehouse", "tool": "stock"}]
    assert doc["services"] == {"catalog": ["clerk", "main"], "warehouse": ["clerk"]}
    shown = run_cli("capabilities", bundle)
    assert "service:warehouse" in shown.stdout, shown.stdout


@pytest.mark.process
def test_a_missing_service_fails_before_any_model_call(bundle: Path, script: Callable[..., Path]) -> None:
    asked: list[str] = []

    def model_for(name: str) -> Any:
        asked.append(name)
        raise AssertionError("no model may be chosen")

    # `warehouse` is needed by clerk's `stock`, which main reaches only through its call to clerk
    config = RuntimeConfig(model_for=model_for, services={"catalog": Catalog()})
    with pytest.raises(ServiceProblem) as caught:
        run_worker(bundle, "go", config=config)
    assert str(caught.value) == ("worker 'clerk' needs service 'warehouse' (tool 'stock' declares it) and this run was not "
                                 "given it (given: catalog); pass it as RuntimeConfig(services={'warehouse': ...})")
    assert asked == []
    # a worker that reaches no service runs without any
    assert run_worker(bundle, "go", worker="plain", config=RuntimeConfig(model="test")).output


@pytest.mark.process
def test_exec_says_which_service_is_missing_and_exits_2(bundle: Path, script: Callable[..., Path], tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    s = script({"workers": {"main": [{"text": "never"}]}})
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 2
    assert one_line_error(result).startswith("llm-do: worker 'main' needs service 'catalog' (tool 'price' declares it)")
    recorded = read_events(events)
    assert of_kind(recorded, "worker_started") == [] and [e["event"] for e in recorded] == ["run_failed"]


@pytest.mark.parametrize("name", ["get", "items", "references", "_private", "not an identifier", "services"])
@pytest.mark.process
def test_reserved_and_malformed_service_names_are_refused(bundle: Path, name: str) -> None:
    with pytest.raises(ServiceProblem, match="RuntimeConfig\\(services=...\\): service name"):
        Runtime.load(bundle, RuntimeConfig(services={name: object()}))


def test_services_read_by_key_and_attribute_and_say_what_is_missing() -> None:
    services = Services({"catalog": 1})
    assert services["catalog"] == services.catalog == services.require("catalog") == 1
    assert dict(services) == {"catalog": 1} and "catalog" in services
    with pytest.raises(KeyError, match="not given service 'mail' \\(given: catalog\\)"):
        services["mail"]
    with pytest.raises(AttributeError, match="not given service 'mail'"):
        services.mail  # noqa: B018
    with pytest.raises(AttributeError, match="not set during a run"):
        services.mail = 2  # type: ignore[attr-defined]
    import copy

    assert dict(copy.copy(services)) == {"catalog": 1}


# --- references -----------------------------------------------------------------------------------

@pytest.mark.process
def test_the_model_sees_a_reference_and_a_tool_resolves_it(bundle: Path, script: Callable[..., Path]) -> None:
    player = scripted(script, {"main": [
        {"tool_calls": [{"tool": "load_report", "args": {"quarter": "Q3"}}]},
        {"tool_calls": [{"tool": "count_words", "args": {"ref": "ref-1"}}, {"tool": "count_words", "args": {"ref": "ref-7"}}]},
        {"text": "done"},
    ]})
    events: list[Any] = []
    config = RuntimeConfig(model_for=player.model_for, services={"catalog": Catalog(), "warehouse": {}}, on_event=events.append)
    result = run_worker(bundle, "go", config=config)
    assert result.output == "done"
    returned = [e.to_dict() for e in events if e.kind == "tool_returned"]
    results = tool_results(result.messages)
    assert results[0] == ("load_report", "success", '{"id":"ref-1","kind":"report","glimpse":"the Q3 report"}')
    assert results[1] == ("count_words", "success", "400 words")  # the tool read the whole payload
    assert results[2][:2] == ("count_words", "failed")  # a bad id is a tool error the model sees
    assert "no reference 'ref-7' in this run" in results[2][2]
    assert json.loads(returned[0]["result"]) == {"id": "ref-1", "kind": "report", "glimpse": "the Q3 report"}
    sent = ModelMessagesTypeAdapter.dump_json(result.messages).decode()
    assert "QUARTERLY-FIGURES" not in sent  # the payload never reached the model


@pytest.mark.process
def test_references_live_in_the_store_the_host_gives(bundle: Path, script: Callable[..., Path]) -> None:
    store = InMemoryReferenceStore()
    player = scripted(script, {"main": [{"tool_calls": [{"tool": "load_report", "args": {"quarter": "Q1"}}]}, {"text": "ok"}]})
    runtime = Runtime.load(bundle, RuntimeConfig(model_for=player.model_for, reference_store=store,
                                                 services={"catalog": Catalog(), "warehouse": {}}))
    runtime.run("go")
    assert store.get("ref-1") == ("report", PAYLOAD)
    assert runtime.references.resolve("ref-1") == PAYLOAD


def test_references_ids_glimpses_and_unknown_ids() -> None:
    refs = References()
    first = refs.create(b"\x00" * 2048, kind="blob")
    second = refs.create("word " * 200)
    assert (first, str(first)) == (Reference(id="ref-1", kind="blob", glimpse="2048 bytes"), "ref-1")
    assert second.id == "ref-2" and second.kind == "data"
    assert second.glimpse.startswith("1000 characters: word word") and second.glimpse.endswith("…")
    assert len(second.glimpse) <= GLIMPSE_CHARS
    assert refs.resolve(first) == refs.resolve("ref-1") == b"\x00" * 2048
    assert refs.create([1, 2, 3]).glimpse == "list of 3 items"
    assert refs.create(42, glimpse="x " * 300).glimpse == shorten("x " * 300)
    with pytest.raises(UnknownReference, match="no reference 'ref-9'"):
        refs.resolve("ref-9")
    with pytest.raises(UnknownReference):
        refs.resolve(123)  # type: ignore[arg-type]


def test_shorten_cuts_after_a_whole_word() -> None:
    assert shorten("alpha   beta\ngamma") == "alpha beta gamma"
    assert shorten("alpha beta gamma delta", limit=14) == "alpha beta…"
    assert shorten("x" * 30, limit=10) == "x" * 9 + "…"


@pytest.mark.parametrize("flags", [(), ("--no-import",)], ids=["import", "no-import"])
@pytest.mark.process
def test_a_service_name_the_runtime_would_refuse_does_not_build(tmp_path: Path, flags: tuple[str, ...]) -> None:
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "main.worker": worker("tools: [price]", "Price."),
        "tools.py": '''
            def price(sku: str) -> str:
                """A price."""
                return sku

            TOOLS = [price]
            CAPABILITIES = {
                "price": ["service:get"],
            }
            ''',
    })
    result = run_cli("lint", root, "--format", "json", *flags)
    found = [d for d in result.json()["diagnostics"] if d["code"] == "Y004"]
    assert [(d["file"], d["line"]) for d in found] == [("tools.py", 7)]
    assert found[0]["message"].startswith("CAPABILITIES: 'service:get': service name 'get' is reserved")
