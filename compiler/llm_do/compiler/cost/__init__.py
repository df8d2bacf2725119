"""What a run can cost at most, known before it starts (spec/cost.md).

- `inputs`: what the bound reads of a project, from a bundle document or a resolved project alike
  (workers' models, settings and calls, the run's limits, the declared prices).
- `models`: the models each worker may run on.
- `bound`: the bound of a run from the entry, and of each worker as a callee, with the request
  that dominates it and, where there is none, why.

Pure: prices come from `llm_do.pricing`, which reads genai-prices' data on first use. Nothing of
it is stored in the bundle; `capabilities`, `graph`, `diff` and `lint` compute it.
"""
