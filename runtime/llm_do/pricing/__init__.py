"""What model requests cost: one model's price sheet, the worst one request of a worker can cost,
and what a response did cost. The compiler's cost bound (`llm_do.compiler.cost`) and the run's
budget (`llm_do.runtime.metering`) price with this one package, so a bound and a budget never
disagree on a price.

- `rates`: a model's prices as the bound reads them (`PriceSheet`: the dearest rate an input or an
  output token can be billed at, per request, per use of a provider-side tool) and the prices a
  project declares for its own models (project.json `cost.prices`).
- `genai`: the sheets of the models genai-prices knows, and which release of its data they are.
- `sheets`: a model's sheet by name, the project's first.
- `ceiling`: the most tokens one request can bill, from the worker's settings and the run's
  limits, and the worst cost of that request.
- `actual`: the cost of one response, as the run counts it.

Standard library, plus genai-prices (a dependency of pydantic-ai) loaded only by `genai` and
`actual`, when a sheet or a response's price is first needed.
"""
