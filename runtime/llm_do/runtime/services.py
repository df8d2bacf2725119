"""Host services: objects the host hands a run (`RuntimeConfig(services={...})`) for its Python
tools and entry code, reached as `ctx.deps.services["catalog"]` or `ctx.deps.services.catalog`.

A tool says which services it needs in its module's CAPABILITIES (`{"lookup": ["service:catalog"]}`),
so the bundle records the need as a capability of every worker holding the tool, `capabilities`
and `diff` show it, and a run is checked before any model is called: a service the run reaches
but was not given is a clear error, not an AttributeError halfway through.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from llm_do.bundle.names import service_name_problem

from .errors import InputProblem

if TYPE_CHECKING:
    from .bundle import LoadedBundle

class ServiceProblem(InputProblem):
    """A service given with a bad name, or one the run needs and was not given (exit 2)."""


class Services(Mapping[str, Any]):
    """The host's services, read-only, by key or by attribute."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        items = dict(items or {})
        for name in items:
            problem = service_name_problem(name)
            if problem is not None:
                raise ServiceProblem(f"RuntimeConfig(services=...): {problem}")
        object.__setattr__(self, "_items", items)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(_missing(name, self._items)) from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # no service is named so (and `_items` may not be set yet, as in copy)
            raise AttributeError(name)
        try:
            return self._items[name]
        except KeyError:
            raise AttributeError(_missing(name, self._items)) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("services are given in RuntimeConfig(services=...), not set during a run")

    def __reduce__(self) -> tuple[Any, ...]:
        return Services, (self._items,)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Services({', '.join(self._items)})"

    def require(self, name: str) -> Any:
        """The service, or an error that says the run was not given it (same as `[name]`)."""
        return self[name]


def _missing(name: str, items: Mapping[str, Any]) -> str:
    given = ", ".join(sorted(items)) or "none"
    return f"this run was not given service '{name}' (given: {given}); pass it as RuntimeConfig(services={{'{name}': ...}})"


def check_services(bundle: LoadedBundle, start: str, given: Mapping[str, object]) -> None:
    """Raise `ServiceProblem` naming the first service that a worker reachable from `start` (by the
    bundle's call edges) needs and the run was not given."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        spec = bundle.worker(name)
        if name in seen or spec is None:
            continue
        seen.add(name)
        check_worker_services(name, spec.services, given)
        todo.extend(spec.calls)


def check_worker_services(worker: str, needs: Mapping[str, str], given: Mapping[str, object]) -> None:
    for service, needed_by in needs.items():
        if service not in given:
            have = ", ".join(sorted(given)) or "none"
            raise ServiceProblem(
                f"worker '{worker}' needs service '{service}' ({needed_by} declares it) and this run was not given it "
                f"(given: {have}); pass it as RuntimeConfig(services={{'{service}': ...}})")
