"""OpenTelemetry traces of runs (`--otel`, `LLM_DO_OTEL=1`, or `instrument()` from Python).

pydantic-ai's own instrumentation does the work: every worker call is an agent run, so it gets an
`invoke_agent WORKER` span, its model requests `chat MODEL` spans and its tool calls
`execute_tool TOOL` spans. A worker called by another runs inside its caller's tool span (the
OpenTelemetry context follows the call), so the spans nest as the calls do and a collector
(Logfire, Jaeger, any OTLP endpoint) shows the run's tree.

Imported only when asked for: the plain `exec` path never loads the OpenTelemetry SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import InputProblem

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider

ENV_SWITCH = "LLM_DO_OTEL"
EXTRA = "pip install 'llm-do[otel]'"


class TelemetryProblem(InputProblem):
    """Tracing was asked for but cannot be set up (the SDK is missing): exit 2."""


def exporting_provider() -> SdkTracerProvider:
    """A tracer provider that sends spans over OTLP/HTTP, configured by the standard variables
    (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, ...);
    the service is `llm-do` unless `OTEL_SERVICE_NAME` says otherwise."""
    import os

    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise TelemetryProblem(f"--otel needs the OpenTelemetry SDK and OTLP exporter: {EXTRA}") from None
    resource = Resource.create({} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "llm-do"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def instrument(tracer_provider: TracerProvider | None = None) -> Callable[[], None]:
    """Instrument every worker's agent with pydantic-ai's instrumentation, sending spans to
    `tracer_provider` (default: the global one a host set up, e.g. `logfire.configure()`).
    Returns the function that ends it: it flushes the provider and puts pydantic-ai's previous
    setting back."""
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    previous = Agent._instrument_default
    Agent.instrument_all(InstrumentationSettings(tracer_provider=tracer_provider))

    def stop() -> None:
        Agent.instrument_all(previous)
        flush = getattr(tracer_provider, "force_flush", None)
        if callable(flush):
            flush()

    return stop


def instrument_cli() -> Callable[[], None]:
    """`--otel` at the command line: an exporting provider of the run's own, shut down (flushed)
    when the command ends."""
    provider = exporting_provider()
    stop = instrument(provider)

    def stop_and_shut_down() -> None:
        stop()
        provider.shutdown()

    return stop_and_shut_down
