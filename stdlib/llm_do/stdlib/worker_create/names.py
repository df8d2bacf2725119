"""The names of the stdlib toolsets that create workers, without their models (the compiler asks
about every toolset reference, most of which create nothing)."""

CREATING_TOOLSETS = ("worker_create", "dynamic_agents")
"""The stdlib toolsets that create workers during a run."""
