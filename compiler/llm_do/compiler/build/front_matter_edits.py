"""A worker's front matter edited only in keys that reach the bundle through its own node
(`LOCAL_KEYS`): what `local_edits` needs to write the node from the last lock, without the parse
stage's pydantic model (importing it costs more than the rest of such a build).

`description`, `model`, `compatible_models` and `model_settings` are copied into the worker's node
by lower (`stages.lower._worker_node`), and `model` and `compatible_models` (with the project's
default model) also give the node its `env:VAR` grants (`capability_grants`). No other node, no
other section and no other check reads them: the per-worker model checks (`worker_models`) are
the only checks, and an `env:` grant is read-only and carries no flow label, so the capability and
flow rules (R001-R006) never report it.

The rest of the front matter is compared as YAML gave it (`structure_hash`, over the data the
parse stage validated, `ParsedWorker.data`): equal, validation gives the same values (each field
is validated alone), so the worker is the same to every later stage but for parse's positions,
which only diagnostics show. A local key is taken only when its value is of the exact type the
model declares (then validation gives it back as it is); anything else is left to a compile.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..cache.front_matter_cache import json_exact
from ..diagnostics import Location
from ..legacy.upgrade import LEGACY_WORKER_SUFFIX, upgrade_front_matter
from ..provider_env import front_models, grant_key, model_grants
from ..syntax.positions import PositionTable
from ..syntax.value_checks import first_unfit
from ..syntax.yaml_document import YamlProblem

LOCAL_KEYS = ("description", "model", "compatible_models", "model_settings")


@dataclass
class LocalKeys:
    """The local keys of a worker's front matter, as validation gives them."""

    file: str
    positions: PositionTable
    description: str | None
    model: str | None
    compatible_models: list[str] | None
    model_settings: dict[str, Any] | None

    def at(self, path: tuple[str | int, ...], key: bool) -> Location:
        pos = self.positions.key(path) if key else self.positions.value(path)
        return Location(file=self.file, line=pos.line, column=pos.column)


def structure_hash(data: dict[str, Any]) -> str:
    """A hash of the front matter `data` without `LOCAL_KEYS`: the other keys and values, in their
    order and with their types (`repr`: JSON writes a key `1` as it writes `'1'`, which validation rejects)."""
    rest = {key: value for key, value in data.items() if key not in LOCAL_KEYS}
    return hashlib.sha256(repr(rest).encode()).hexdigest()


def local_keys(file: str, front_text: str, structure: str) -> LocalKeys | None:
    """The local keys of the front matter `front_text` of the worker file `file`, when it parses
    as the parse stage parses it with no problem and its other keys hash to `structure`; else None."""
    from ..syntax.yaml_positions import load_yaml  # PyYAML: not for `structure_hash` after a build that parsed none

    if file.endswith(LEGACY_WORKER_SUFFIX):
        return None
    doc = load_yaml(front_text, 1)
    if isinstance(doc, YamlProblem) or doc.duplicate_keys or not isinstance(doc.data, dict) or first_unfit(doc.data) is not None:
        return None
    data, positions, found = upgrade_front_matter(doc.data, file, doc.positions, legacy_file=False)
    if found or not isinstance(data, dict) or structure_hash(data) != structure:
        return None
    description, model = data.get("description"), data.get("model")
    patterns, settings = data.get("compatible_models"), data.get("model_settings")
    if not (_text_or_none(description) and _text_or_none(model)
            and (patterns is None or (type(patterns) is list and all(type(p) is str for p in patterns)))
            and (settings is None or (type(settings) is dict and json_exact(settings)))):
        return None
    return LocalKeys(file, positions, description, model, patterns, settings)


def with_local_keys(node: dict[str, Any], keys: LocalKeys, default_model: str | None) -> bool:
    """Set the node's `LOCAL_KEYS` as lower sets them and its model grants as `capability_grants`
    gives them (the caller hashes it again); False when the node's grants do not read as lower's."""
    grants = node.get("capabilities")
    if not isinstance(grants, list) or not all(isinstance(g, dict) and isinstance(g.get("capability"), str) for g in grants):
        return False
    order = [grant_key(g) for g in grants]
    if order != sorted(set(order)):
        return False  # not lower's sorted, deduplicated grants
    kept = {k: g for k, g in zip(order, grants, strict=True) if "model" not in g}
    for key, grant in model_grants(front_models(keys.model, keys.compatible_models, default_model)).items():
        kept.setdefault(key, grant)
    node["description"] = keys.description
    node["model"] = keys.model
    node["compatible_models"] = keys.compatible_models
    node["model_settings"] = keys.model_settings
    node["capabilities"] = [kept[k] for k in sorted(kept)]
    return True


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str
