"""What a cassette keeps of the bundle a call ran on, read from the bundle by name: the worker's node
hash and the code fingerprints of the Python tools it has. Staleness compares them with the
project as it is now."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_do.bundle.views import WorkerSpec

    from ..bundle import LoadedBundle


def worker_node_hash(bundle: LoadedBundle, worker: str) -> str | None:
    node = bundle.text.member("workers", worker)
    return None if node is None else node.get("hash")


def code_fingerprints(bundle: LoadedBundle, worker: str) -> dict[str, str]:
    """Tool name -> fingerprint of the code it runs, for the worker's Python tools (a `TOOLSETS`
    toolset's tools share its module's)."""
    spec = bundle.worker(worker)
    if spec is None:
        return {}
    out: dict[str, str] = {}
    for name, binding in spec.tools.items():
        node = bundle.toolset(binding.toolset) if binding.toolset else None
        if node is None:
            continue
        tools = node.get("tools")
        tool = tools.get(name) if tools else None
        code = (tool.get("code") if tool else None) or node.get("code")
        if code and code.get("fingerprint"):
            out[name] = code["fingerprint"]
    return dict(sorted(out.items()))


def project_model(bundle: LoadedBundle, spec: WorkerSpec, inherited: str | None) -> str | None:
    """The model the project gives the worker (its own, its caller's, the default), whatever a run
    overrides it with; None when it gives none."""
    from ..models import ModelProblem, choose_model

    try:
        chosen = choose_model(spec, bundle.defaults.get("model"), None, inherited)
    except ModelProblem:
        return None
    return chosen if isinstance(chosen, str) else None
