"""What makes a case's cassette stale besides what its models were shown (which the replay finds,
`Replayer.stale`): the code of the recorded calls' Python tools changed, or a worker is gone; and how
to record a stale cassette again, the way it was made."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.recording.cassette import Cassette


def static_changes(cassette: Cassette, bundle: LoadedBundle) -> list[str]:
    """What changed in the code of the tools the recorded calls were offered, or workers gone."""
    from llm_do.runtime.recording.bundle_facts import code_fingerprints

    out: list[str] = []
    for call in cassette.calls:
        if call.node is None:
            continue  # created during the run
        if bundle.worker(call.worker) is None:
            out.append(f"worker {call.worker} removed")
            continue
        now = code_fingerprints(bundle, call.worker)
        for tool, fingerprint in call.code.items():
            if now.get(tool) != fingerprint:
                line = f"code of tool {tool} changed (used by {call.worker})"
                if line not in out:
                    out.append(line)
    return out


def stale_hint(cassette: Cassette) -> str:
    """How to record a stale cassette again, the way it was made."""
    said = "the cassette is stale (what the model is shown changed since it was recorded)"
    if cassette.script is not None:
        return f"{said}: record it again from its script {cassette.script} with `llm-do test --record`"
    models = sorted({call.model for call in cassette.calls})
    if models and all(model.startswith("script:") for model in models):
        return (f"{said}: it was recorded from a script it does not name; record it again from that script "
                "(`llm-do run PROJECT --script SCRIPT --record DIR`)")
    return f"{said}: record it again on the project's models with `llm-do test --record --live` (it calls {', '.join(models)})"
