"""What a worker's node becomes when its front matter changed only in keys that reach the bundle
through that node alone (`LOCAL_KEYS`), so that `local_edits` can write it from the last lock.

`description`, `model`, `compatible_models` and `model_settings` are copied into the worker's node
by lower (`stages.lower._worker_node`), and `model` and `compatible_models` (with the project's
default model) also give the node its `env:VAR` grants (`capability_grants`). No other node, no
other section and no other check reads them: the per-worker model checks (M001-M003, P011,
`check.models.worker_model_problems`) are the only checks, and an `env:` grant is read-only and
carries no flow label, so the capability and flow rules (R001-R006) never report it. Every other
key (and the set of keys written) is compared through `structure_hash`: equal, the worker is the
same to every stage but parse's positions.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..provider_env import front_models, grant_key, model_grants

if TYPE_CHECKING:
    from ..syntax.front_matter import WorkerFrontMatter

LOCAL_KEYS = frozenset({"description", "model", "compatible_models", "model_settings"})


def structure_hash(front: WorkerFrontMatter) -> str:
    """A hash of the front matter without `LOCAL_KEYS`: its values (in their order) and which keys were written."""
    rest = front.model_dump(exclude=set(LOCAL_KEYS))
    written = sorted(front.model_fields_set - LOCAL_KEYS)
    text = json.dumps([rest, written], ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def with_local_keys(node: dict[str, Any], front: WorkerFrontMatter, default_model: str | None) -> bool:
    """Set the node's `LOCAL_KEYS` as lower sets them and its model grants as `capability_grants`
    gives them (the caller hashes it again); False when the node's grants do not read as lower's."""
    grants = node.get("capabilities")
    if not isinstance(grants, list) or not all(isinstance(g, dict) and isinstance(g.get("capability"), str) for g in grants):
        return False
    keys = [grant_key(g) for g in grants]
    if keys != sorted(set(keys)):
        return False  # not lower's sorted, deduplicated grants
    kept = {k: g for k, g in zip(keys, grants, strict=True) if "model" not in g}
    for key, grant in model_grants(front_models(front.model, front.compatible_models, default_model)).items():
        kept.setdefault(key, grant)
    node["description"] = front.description
    node["model"] = front.model
    node["compatible_models"] = front.compatible_models
    node["model_settings"] = front.model_settings
    node["capabilities"] = [kept[k] for k in sorted(kept)]
    return True
