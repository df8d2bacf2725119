"""What may name a host service: shared by the compiler (a module's `service:NAME` declarations)
and the runtime (`RuntimeConfig(services=...)`), so a name the runtime would refuse never builds.
Standard library only: the compiler imports it."""

from __future__ import annotations

SERVICE_KIND = "service"
"""The capability kind a module declares a service need with: `service:NAME`."""

RESERVED = frozenset({"get", "keys", "items", "values", "require", "runtime", "references", "services"})
"""Names a service may not take: the registry's own methods (attribute access would hide them) and
what `ctx.deps` already calls `runtime`, `references` and `services`."""


def service_name_problem(name: object) -> str | None:
    """Why `name` cannot name a service, or None: a Python identifier (attribute access), not
    private, not reserved."""
    if not isinstance(name, str) or not name.isidentifier():
        return f"service name {name!r} is not a Python identifier"
    if name.startswith("_"):
        return f"service name {name!r} starts with '_'; such names are reserved"
    if name in RESERVED:
        return f"service name {name!r} is reserved ({', '.join(sorted(RESERVED))})"
    return None
