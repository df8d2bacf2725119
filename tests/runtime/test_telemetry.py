"""`--otel` / `LLM_DO_OTEL=1`: pydantic-ai's spans, one `invoke_agent` per worker call, nested as
the calls are; recorded here by an in-memory exporter instead of the OTLP one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from llm_do.runtime import telemetry
from tests.support.cli import run_cli
from tests.support.events import FLOW, FLOW_PROJECT
from tests.support.projects import build_project


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("otel") / "proj", FLOW_PROJECT)


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """The CLI's exporting provider replaced by one recording in memory."""
    memory = InMemorySpanExporter()

    def provider() -> TracerProvider:
        made = TracerProvider()
        made.add_span_processor(SimpleSpanProcessor(memory))
        return made

    monkeypatch.setattr(telemetry, "exporting_provider", provider)
    return memory


def tree(spans: list[Any]) -> list[tuple[str, str | None]]:
    """(span name, parent span name) of each span, in the order they ended."""
    names = {s.context.span_id: s.name for s in spans}
    return [(s.name, names.get(s.parent.span_id) if s.parent else None) for s in spans]


def ancestors(spans: list[Any], name: str) -> list[str]:
    by_id = {s.context.span_id: s for s in spans}
    span = next(s for s in spans if s.name == name)
    chain = []
    while span.parent is not None:
        span = by_id[span.parent.span_id]
        chain.append(span.name)
    return chain


@pytest.mark.parametrize("switch", ["--otel", "LLM_DO_OTEL"])
def test_each_worker_call_is_a_span_nested_in_its_callers(bundle: Path, script, exporter, switch: str) -> None:
    flags = ["--otel"] if switch == "--otel" else []
    env = {"LLM_DO_OTEL": "1"} if switch == "LLM_DO_OTEL" else None
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), *flags, env=env)
    assert result.exit_code == 0, result.stderr
    spans = list(exporter.get_finished_spans())
    names = [name for name, _ in tree(spans)]
    assert names.count("invoke_agent main") == 1 and names.count("invoke_agent helper") == 1
    assert ("invoke_agent helper", "execute_tool helper") in tree(spans)
    assert ancestors(spans, "execute_tool read_file")[:3] == ["invoke_agent helper", "execute_tool helper", "invoke_agent main"]
    assert ancestors(spans, "invoke_agent main") == []  # the entry's call is the root


def test_without_the_switch_no_span_is_made_and_instrumentation_is_put_back(bundle: Path, script, exporter) -> None:
    from pydantic_ai import Agent

    assert run_cli("exec", bundle, "go", "--script", script(FLOW), "--otel").exit_code == 0
    assert Agent._instrument_default is False  # put back when the command ended
    exporter.clear()
    assert run_cli("exec", bundle, "go", "--script", script(FLOW)).exit_code == 0
    assert exporter.get_finished_spans() == ()


def test_python_hosts_pass_their_own_provider(bundle: Path) -> None:
    from llm_do.runtime import Runtime, RuntimeConfig

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    stop = telemetry.instrument(provider)
    try:
        Runtime.load(bundle, RuntimeConfig(model="test", approval_mode="approve_all")).run("hi")
    finally:
        stop()
    assert "invoke_agent main" in [s.name for s in memory.get_finished_spans()]


def test_otel_without_the_sdk_is_a_usage_error(bundle: Path, script, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_exporter(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("opentelemetry.exporter"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_exporter)
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "--otel")
    assert result.exit_code == 2
    assert result.stderr.strip() == "llm-do: --otel needs the OpenTelemetry SDK and OTLP exporter: pip install 'llm-do[otel]'"
