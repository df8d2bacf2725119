"""A build after edits local to workers, written from the lock of the build before.

A worker's body (the text after its front matter) reaches the bundle through its rendered
instructions alone, and the front matter keys `description`, `model`, `compatible_models` and
`model_settings` through the worker's own node and per-worker checks alone (`front_matter_edits`).
So when the only files that changed since a recorded build (`build_record`: the same tree, the
same answers of imports, every other file the same) are workers whose old and new bodies both
render without Jinja (`templates.render.render_plain`: no include, no file read, no problem to report),
and whose text up to the body is the same or front matter that parses as the parse stage parses
it with no problem, is the same but for those keys, and passes the model checks with none, a clean build
writes the lock of the build before with three things changed: each such worker's node (its
`instructions`, its local keys and model grants, and `hash`), the file's source hash, and the
digest. The diagnostics are the record's, when none of them is about an edited file (or, for a
front matter edit, names it at all: its keys may have moved).

The lock's bytes are trusted because a signed record says a clean build wrote them; what this
module keeps (a signed pack per lock, `packs`: each worker file's name, the hash of its text up to
the body, whether its body rendered without Jinja, the hash of its front matter without the local
keys, and the project's `vars`) is JSON only. A record or pack that is missing, forged or kept for
other bytes means a full compile, as without a cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.canonical import DIGEST_KEY, HASH_KEY, document_json, node_hash, sha256_hex, tagged
from llm_do.provenance.build_record import changed_files, recorded, rerecord
from llm_do.provenance.user_cache import SignedEntries

from ..cache.packs import SignedPacks, code_material
from ..codes import Rule
from ..syntax.sources import NotText, OutsideRoot, SourceFile, SourceKind, SourceMap, Unreadable, normalized
from ..syntax.worker_forms import worker_directory

if TYPE_CHECKING:
    from ..stages.parse import ParsedWorker

FORMAT = 2
_DIGEST_PREFIX = f'\n  {json.dumps(DIGEST_KEY)}: "'.encode()
_NODE_CLOSE = b"\n    }"
_SECTION_CLOSE = b"\n  }"


@dataclass
class Recalled:
    """What a build record says of the lock: `record`, the earlier build's (its `diagnostics`,
    `workers`), and, when workers were edited since, `rebuilt`."""

    record: dict[str, Any]
    rebuilt: Rebuilt | None = None


@dataclass
class Rebuilt:
    bundle: bytes
    """Exactly what a clean build writes now."""
    changed: dict[str, str]
    """The edited worker files, by their source hash now."""
    kept: bytes
    """The pack's data for `bundle` (the hash of each edited worker's text up to the body taken again)."""


def recall_edits(records: SignedEntries, root: Path, lock: Path, packs: SignedPacks | None) -> Recalled | None:
    """The record of the lock when it still holds (`rebuilt` None), or when only workers' bodies
    and local front matter keys changed since and `packs` is given (`rebuilt`: the bytes a clean
    build writes now); else None."""
    found = recorded(records, root, lock)
    if found is None:
        return None
    data, body = found
    changed = changed_files(body, root, lock)
    if changed is None:
        return None
    if not changed:
        return Recalled(body)
    if packs is None:
        return None
    rebuilt = _rebuilt(packs, root, lock, data, body, list(changed))
    return None if rebuilt is None else Recalled(body, rebuilt)


def keep_rebuilt(records: SignedEntries, packs: SignedPacks, root: Path, lock: Path, recalled: Recalled) -> None:
    """Record the rebuilt lock as a build's (`build_record.rerecord`), so the next build or check
    of the unchanged project compiles nothing and the next worker edit is rebuilt the same way."""
    rebuilt = recalled.rebuilt
    assert rebuilt is not None
    rerecord(records, root, lock, rebuilt.bundle, recalled.record, rebuilt.changed)
    packs.write(_material(root, lock, rebuilt.bundle), rebuilt.kept, {})


def keep_workers(packs: SignedPacks, root: Path, lock: Path, bundle: bytes, workers: Iterable[ParsedWorker],
                sources: Mapping[str, SourceFile], variables: dict[str, Any]) -> None:
    """After a clean build that wrote `bundle`: what `recall_edits` needs of its workers, and the
    files the bodies that need Jinja read (rendered again here, each read noted): a worker file
    one of them includes or reads with `file()` is not a worker `recall_edits` may rebuild."""
    from ..cache.front_matter_cache import json_exact
    from ..templates.render import TemplateContext, TemplateUnit, render_body, render_plain
    from .front_matter_edits import structure_hash

    if not json_exact(variables):
        return  # JSON would not give back the vars the bodies were rendered with
    entries: dict[str, list[Any]] = {}
    jinja: list[ParsedWorker] = []
    for parsed in workers:
        source = sources.get(parsed.file)
        if source is None or not source.text.endswith(parsed.body):
            continue
        plain = render_plain(parsed.body, variables) is not None
        if not plain:
            jinja.append(parsed)
        head = source.text[: len(source.text) - len(parsed.body)]
        entries[parsed.file] = [parsed.name, _text_hash(head), plain, structure_hash(parsed.data)]
    log = _ReadLog(root)
    ctx = TemplateContext(log, variables)
    for parsed in jinja:
        render_body(ctx, TemplateUnit(parsed.file, parsed.body, parsed.body_line - 1, directory=worker_directory(parsed.file)))
    kept = {"vars": variables, "workers": entries, "read": sorted(log.noted)}
    packs.write(_material(root, lock, bundle), _pack_bytes(kept), {})


@dataclass
class _ReadLog(SourceMap):
    """The project's files, noting every one read (by its key in the source map)."""

    noted: set[str] = field(default_factory=set)

    def read(self, rel: str, kind: SourceKind) -> SourceFile:
        self.noted.add(normalized(rel))
        return super().read(rel, kind)


def _rebuilt(packs: SignedPacks, root: Path, lock: Path, data: bytes, record: dict[str, Any],
             changed: list[str]) -> Rebuilt | None:
    from ..syntax.front_matter_split import split_front_matter
    from ..templates.render import render_plain

    pack = packs.read(_material(root, lock, data))
    kept = _decoded(pack[0]) if pack is not None else None
    if pack is None or kept is None:
        return None
    variables, workers, whole = kept
    said = json.dumps(record.get("diagnostics"), ensure_ascii=False)
    files = record["files"]
    sources = SourceMap(root)
    spans: list[tuple[int, int, bytes]] = []
    hashes: dict[str, str] = {}
    defaults: tuple[str | None, set[str]] | None = None
    for rel in changed:
        entry = workers.get(rel)
        if entry is None or not _printable(rel) or json.dumps(rel, ensure_ascii=False) in said:
            return None  # not a worker whose old body rendered without Jinja, or a diagnostic is about it
        try:
            source = sources.read(rel, "worker")
        except (OSError, OutsideRoot, NotText, Unreadable):
            return None
        split = split_front_matter(source.text)
        if isinstance(split, Rule):
            return None
        body = split[1]
        instructions = render_plain(body, variables)
        head = _text_hash(source.text[: len(source.text) - len(body)])
        if instructions is None:
            return None
        node = _member(data, "workers", entry[0])
        listed = _member(data, "sources", rel)
        if node is None or listed is None or not _with_hash(listed[2], files[rel][0], source.sha256):
            return None
        if head != entry[1]:
            if defaults is None:
                defaults = _model_defaults(data)
            if defaults is None or json.dumps(rel, ensure_ascii=False)[1:-1] in said \
                    or not _with_front_matter(node[2], rel, split[0], entry, *defaults):
                return None  # a diagnostic names the file (its positions may have moved), or not a local edit
            entry[1] = head
        if not _with_instructions(node[2], rel, instructions):
            return None
        spans += [(start, stop, _node_text(value)) for start, stop, value in (node, listed)]
        hashes[rel] = source.sha256
    return Rebuilt(_sealed(data, spans), hashes, _pack_bytes(whole) if defaults is not None else pack[0])


def _with_front_matter(node: dict[str, Any], rel: str, front_text: str, entry: list[Any], default_model: str | None,
                       registered: set[str]) -> bool:
    """Whether the worker's front matter parses with no problem, differs from the one of the pack's
    `entry` in `front_matter_edits.LOCAL_KEYS` alone, and passes the model checks with none; if
    so, the node has them as lower sets them."""
    from ..analysis.worker_models import worker_model_problems
    from .front_matter_edits import local_keys, with_local_keys

    keys = local_keys(rel, front_text, entry[3])
    if keys is None or worker_model_problems(entry[0], keys.model, keys.compatible_models, keys.at, default_model, registered):
        return False
    return with_local_keys(node, keys, default_model)


def _model_defaults(data: bytes) -> tuple[str | None, set[str]] | None:
    """The lock's default model and the prefixes of its model factories (what the model checks
    read of the project); None when the lock does not hold them as lower writes them."""
    defaults = _top_level(data, "defaults")
    factories = _top_level(data, "model_factories") if b'\n  "model_factories": ' in data else {}
    if not isinstance(defaults, dict) or not isinstance(factories, dict):
        return None
    model = defaults.get("model")
    return (model, set(factories)) if model is None or isinstance(model, str) else None


def _top_level(data: bytes, key: str) -> Any:
    """The value of the lock's top-level `key`: it runs to the next line at indentation 2 that opens
    a key (every newline of the lock is structural); None when absent or not JSON."""
    opening = f"\n  {json.dumps(key)}: ".encode()
    start = data.find(opening)
    if start < 0:
        return None
    start += len(opening)
    stop = data.find(b'\n  "', start)
    if stop < 0:
        stop = data.rfind(b"\n}")
    if stop < start:
        return None
    try:
        return json.loads(data[start:stop].rstrip(b","))
    except (ValueError, UnicodeDecodeError):
        return None


def _with_instructions(node: dict[str, Any], rel: str, instructions: str) -> bool:
    """Set the node's instructions and take its hash again (after any other change to it)."""
    if node.get("source") != rel or not isinstance(node.get(HASH_KEY), str):
        return False
    node["instructions"] = instructions
    node[HASH_KEY] = node_hash(node)
    return True


def _with_hash(listed: dict[str, Any], old: Any, new: str) -> bool:
    if listed.get("sha256") != old or listed.get("kind") != "worker":
        return False
    listed["sha256"] = new
    return True


def _member(data: bytes, section: str, key: str) -> tuple[int, int, dict[str, Any]] | None:
    """Where the member `key` of the top-level `section` of the lock `data` lies, and its value.
    Every newline of the lock is structural (`canonical.document_json`): a section's members are
    the lines at indentation 4 between its line and its closing line."""
    opening = f"\n  {json.dumps(section)}: {{".encode()
    at = data.find(opening)
    end = data.find(_SECTION_CLOSE, at + len(opening)) if at >= 0 else -1
    if end < 0:
        return None
    member = f"\n    {json.encoder.encode_basestring(key)}: ".encode()
    start = data.find(member, at, end)
    if start < 0:
        return None
    start += len(member)
    stop = data.find(_NODE_CLOSE, start, end + 1)
    if stop < 0:
        return None
    stop += len(_NODE_CLOSE)
    try:
        value = json.loads(data[start:stop])
    except (ValueError, UnicodeDecodeError):
        return None
    return (start, stop, value) if isinstance(value, dict) else None


def _node_text(value: dict[str, Any]) -> bytes:
    """`value` as the lock writes a member of a section (at indentation 4)."""
    return document_json(value)[:-1].replace(b"\n", b"\n    ")


def _sealed(data: bytes, spans: list[tuple[int, int, bytes]]) -> bytes:
    """`data` with each span `(start, stop, text)` replaced by its text and the digest taken
    again as `canonical.seal` takes it: over the text with the digest's value blank."""
    start = data.index(_DIGEST_PREFIX) + len(_DIGEST_PREFIX)
    stop = data.index(b'"', start)
    view = memoryview(data)
    parts: list[bytes | memoryview] = []
    at, digest_at = 0, -1
    for begin, end, text in sorted([(start, stop, b""), *spans], key=lambda span: span[0]):
        if begin == start:
            digest_at = len(parts) + 1
        parts += [view[at:begin], text]
        at = end
    parts.append(view[at:])
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    parts[digest_at] = tagged(hasher.hexdigest()).encode()
    return b"".join(parts)


def _decoded(raw: bytes) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, Any]] | None:
    """The vars, the entries of the workers that may be rebuilt (their body rendered without Jinja
    and no template read the file), and the whole pack; None when the pack does not read as one."""
    try:
        kept = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(kept, dict) or not isinstance(kept.get("vars"), dict) or not isinstance(kept.get("workers"), dict) \
            or not isinstance(kept.get("read"), list):
        return None
    read = set(kept["read"])
    workers = {rel: entry for rel, entry in kept["workers"].items()
               if rel not in read and isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
               and isinstance(entry[1], str) and entry[2] is True and isinstance(entry[3], str)}
    return kept["vars"], workers, kept


def _pack_bytes(kept: dict[str, Any]) -> bytes:
    return json.dumps(kept, sort_keys=True, ensure_ascii=False).encode()


def _printable(rel: str) -> bool:
    """Whether diagnostics name the file as `rel` (they escape what UTF-8 cannot encode)."""
    try:
        rel.encode()
    except UnicodeEncodeError:
        return False
    return True


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _material(root: Path, lock: Path, bundle: bytes) -> dict[str, Any]:
    return {"bodies": FORMAT, **code_material(), "root": str(root), "lock": str(lock.parent.resolve() / lock.name),
            "bundle": sha256_hex(bundle)}
