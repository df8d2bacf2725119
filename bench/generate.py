"""Generate benchmark projects of N workers: deterministic, building cleanly (no diagnostics).

Shape: `main` fans out to up to 10 coordinators; each coordinator fans out to chains of up to
`--chain-length` workers (each worker of a chain calls the next). Every worker is reachable from
`main`; `runtime.max_depth` in project.json is the deepest worker's depth, so no call is G002.
Each worker has one stdlib toolset (filesystem_project_ro, shell_readonly or filesystem_project,
in turn) and a few hundred words of instructions made from a fixed word list with a seeded random;
every 7th body uses `{{ vars }}` from project.json, the others have no template syntax.

    python bench/generate.py                     # 1, 300 and 3000 workers into bench/.work/
    python bench/generate.py --sizes 50 --out /tmp/projects

Projects are written to OUT/workers-N/ (the directory is replaced). The same arguments give the
same bytes on any machine. Other bench scripts import `generate_project` and `minimal_project`.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / ".work"
DEFAULT_SIZES = (1, 300, 3000)
COORDINATORS = 10
CHAIN_LENGTH = 10
STDLIB = ("filesystem_project_ro", "shell_readonly", "filesystem_project")
DEFAULT_MODEL = "anthropic:claude-sonnet-4-5"
VARS = {"company": "Northwind Analytics", "audience": "the platform team", "tone": "plain and direct"}

NOUNS = """
report changelog invoice dataset schema migration release ticket incident dashboard metric
pipeline deployment contract customer supplier ledger forecast budget roadmap backlog module
service endpoint configuration policy audit summary timeline dependency package license
document section table figure paragraph heading reference citation glossary appendix draft
review comment request response error warning log trace record entry batch queue job task
owner reviewer stakeholder team region account product feature test fixture benchmark
""".split()
VERBS = """
read check compare list summarize extract verify collect group sort rank flag note record
describe explain outline estimate measure count trace review inspect confirm reconcile
classify annotate highlight filter merge split rename quote cite draft revise
""".split()
ADJECTIVES = """
recent stale missing duplicate inconsistent critical minor relevant external internal
quarterly monthly weekly pending approved rejected public private shared legacy current
previous upcoming unresolved partial complete empty large small exact approximate
""".split()
ADVERBS = "carefully briefly precisely explicitly consistently only first then finally always never".split()
CONNECTIVES = ["Before you answer,", "When in doubt,", "If a file is missing,", "For each item,",
               "Where numbers disagree,", "As a rule,", "Afterwards,", "In every case,"]
ROLES = ["triage", "research", "review", "summary", "audit", "planning", "extraction", "reporting"]


def _a(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _sentence(rng: random.Random) -> str:
    kind = rng.randrange(4)
    noun, noun2 = rng.choice(NOUNS), rng.choice(NOUNS)
    adj, verb, verb2 = rng.choice(ADJECTIVES), rng.choice(VERBS), rng.choice(VERBS)
    if kind == 0:
        s = f"{verb.capitalize()} every {adj} {noun} and {verb2} the {noun2} it refers to"
    elif kind == 1:
        s = f"{rng.choice(CONNECTIVES)} {verb} the {noun} {rng.choice(ADVERBS)} and {verb2} each {adj} {noun2}"
    elif kind == 2:
        s = f"Do not {verb} {_a(adj)} {adj} {noun} without saying which {noun2} you used"
    else:
        s = f"The {noun} may contain {adj} {noun2}s; {verb} them {rng.choice(ADVERBS)}"
    return s + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences))


def instructions(name: str, callees: list[str], toolset: str, templated: bool, seed: int) -> str:
    """A few hundred words of deterministic, realistic-looking instructions."""
    rng = random.Random(f"{seed}:{name}")
    role = rng.choice(ROLES)
    who = "{{ company }}" if templated else "the company"
    parts = [f"You are the {role} worker `{name}` for {who}."]
    if templated:
        parts[0] += " Write for {{ audience }}; keep the tone {{ tone }}."
    parts.append(_paragraph(rng, rng.randint(5, 8)))
    tools = {"filesystem_project_ro": "read and list the project's files",
             "filesystem_project": "read, list and write the project's files",
             "shell_readonly": "run read-only shell commands (ls, cat, grep, git log)"}[toolset]
    parts.append(f"You can {tools}. Use them before you guess.")
    if callees:
        parts.append("Delegate to " + ", ".join(f"`{c}`" for c in callees)
                     + " when a part of the task is theirs; give each a short, complete request.")
    steps = [f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(5, 8) + 1)]
    parts.append("Steps:\n" + "\n".join(steps))
    parts.append(_paragraph(rng, rng.randint(5, 8)))
    parts.append("Answer with a short summary first, then the details, then open questions.")
    return "\n\n".join(parts) + "\n"


def _worker_text(name: str, description: str, toolsets: list[str], body: str, tools: tuple[str, ...] | list[str] = ()) -> str:
    lines = ["---", f"description: {description}", "toolsets:"] + [f"  - {t}" for t in toolsets]
    lines += (["tools:"] + [f"  - {t}" for t in tools]) if tools else []
    lines += ["---"]
    return "\n".join(lines) + "\n" + body


def plan(n: int, coordinators: int = COORDINATORS, chain_length: int = CHAIN_LENGTH,
         root: str = "main") -> tuple[dict[str, list[str]], dict[str, str], int]:
    """(callees by worker, relative path by worker, deepest depth) for a tree of n workers."""
    if n < 1:
        raise ValueError("n must be >= 1")
    calls: dict[str, list[str]] = {root: []}
    paths: dict[str, str] = {root: f"{root}.worker"}
    coords = [f"coord_{c:02d}" for c in range(min(coordinators, n - 1))]
    for c in coords:
        calls[root].append(c)
        calls[c] = []
        paths[c] = f"workers/{c}/{c}.worker"
    rest = n - 1 - len(coords)
    chains = -(-rest // chain_length) if rest else 0
    depth = 1 + (1 if coords else 0)
    for j in range(chains):
        # chain j gets an even share of the remaining workers, at coordinator j % len(coords)
        size = rest // chains + (1 if j < rest % chains else 0)
        coord = coords[j % len(coords)]
        prev = coord
        for k in range(size):
            name = f"w_{j:03d}_{k:02d}"
            calls[prev].append(name)
            calls[name] = []
            paths[name] = f"workers/{coord}/chain_{j:03d}/{name}.worker"
            prev = name
        depth = max(depth, 2 + size)
    return calls, paths, depth


PYTHON_HELPERS = '''"""Helpers the generated tool modules share."""

from __future__ import annotations

import json

LIMIT = 200


def clip(text: str, limit: int = LIMIT) -> str:
    """Shorten text to `limit` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_record(kind: str, text: str) -> str:
    return json.dumps({"kind": kind, "text": clip(text)}, sort_keys=True)
'''


def python_tool_module(k: int, tools_per_module: int = 4) -> str:
    """A tool module: `tools_per_module` tools sharing a module helper and tools/shared.py."""
    lines = [f'"""Generated tool module {k}."""', "", "from __future__ import annotations", "",
             "from tools.shared import as_record, clip", "", f"PREFIX = 'm{k}'", "", "",
             "def _label(text: str) -> str:", "    return f'{PREFIX}:{clip(text, 40)}'", ""]
    for t in range(tools_per_module):
        lines += ["", f"def tool_{k}_{t}(text: str, count: int = 1) -> str:",
                  f'    """Tool {t} of module {k}: records the text `count` times."""',
                  f"    return '\\n'.join(as_record(_label(text), text) for _ in range(count + {t}))", ""]
    lines += ["", "TOOLS = [" + ", ".join(f"tool_{k}_{t}" for t in range(tools_per_module)) + "]"]
    return "\n".join(lines) + "\n"


SHARED_PROMPT = "prompts/house_rules.md"
HOUSE_RULES = """House rules:
- Quote the files you rely on, with their paths.
- Say when you are unsure, and what would settle it.
- Never paste credentials or personal data into an answer.
"""


def generate_project(root: Path, n: int, *, seed: int = 0, coordinators: int = COORDINATORS,
                     chain_length: int = CHAIN_LENGTH, solo_entry: bool = False, python_modules: int = 0,
                     shared_prompt_every: int = 0) -> Path:
    """Write a project of n workers to `root` (replaced). With `solo_entry`, the entry is a
    tool-less `main` like `minimal_project`'s and the tree (n-1 workers) hangs from `lead`,
    unreachable from the entry (G003 suppressed): a run touches the entry worker only. With
    `python_modules` M, tools/tools_0.py .. tools_{M-1}.py share tools/shared.py, and worker i
    lists one tool of module i % M (Python tools are asked by default: no R001). With
    `shared_prompt_every` K, worker i with i % K == 0 ends its instructions with an include of
    prompts/house_rules.md (one template many workers share)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    tree_root = "lead" if solo_entry else "main"
    tree_n = n - 1 if solo_entry else n
    calls, paths, depth = plan(tree_n, coordinators, chain_length, tree_root) if tree_n else ({}, {}, 1)
    manifest: dict = {
        "version": 1,
        "name": f"bench-{n}",
        "worker_files": ["main.worker", "lead.worker", "workers/**/*.worker"] if solo_entry
        else (["main.worker", "workers/**/*.worker"] if n > 1 else ["main.worker"]),
        "entry": {"worker": "main"},
        "runtime": {"max_depth": depth},
        "defaults": {"model": DEFAULT_MODEL},
        "vars": VARS,
        # Coordinators that only read call chains that write: privilege through delegation by design.
        "suppress": ["R002"],
    }
    if python_modules:
        (root / "tools").mkdir()
        (root / "tools" / "shared.py").write_text(PYTHON_HELPERS, encoding="utf-8")
        for k in range(python_modules):
            (root / "tools" / f"tools_{k}.py").write_text(python_tool_module(k), encoding="utf-8")
        manifest["python_files"] = [f"tools/tools_{k}.py" for k in range(python_modules)]
    if shared_prompt_every:
        (root / "prompts").mkdir()
        (root / SHARED_PROMPT).write_text(HOUSE_RULES, encoding="utf-8")
    if solo_entry:
        manifest["suppress"] = ["G003", "R002"]
        (root / "main.worker").write_text(MINIMAL_WORKER, encoding="utf-8")
    (root / "project.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for i, name in enumerate(sorted(calls)):
        toolset = STDLIB[i % len(STDLIB)]
        templated = i % 7 == 3
        body = instructions(name, calls[name], toolset, templated, seed)
        if shared_prompt_every and i % shared_prompt_every == 0:
            body += f'\n{{% include "{SHARED_PROMPT}" %}}\n'
        description = f"Handles the {name.replace('_', ' ')} part of the {n}-worker benchmark workflow"
        path = root / paths[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        tools = [f"tool_{i % python_modules}_{i % 4}"] if python_modules else []
        path.write_text(_worker_text(name, description, [toolset] + calls[name], body, tools), encoding="utf-8")
    return root


MINIMAL_WORKER = "---\ndescription: answers in one line\n---\nAnswer the request in one short line.\n"


def minimal_project(root: Path) -> Path:
    """One worker, no tools, no template: as close to `Agent('test').run_sync('hi')` as a bundle gets."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    manifest = {"version": 1, "name": "bench-minimal", "worker_files": ["main.worker"],
                "entry": {"worker": "main"}, "defaults": {"model": DEFAULT_MODEL}}
    (root / "project.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (root / "main.worker").write_text(MINIMAL_WORKER, encoding="utf-8")
    return root


def chain_project(root: Path, length: int = 5) -> Path:
    """`c1` calls `c2` ... calls `c<length>`: no stdlib tools, max_depth = length."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    names = [f"c{i}" for i in range(1, length + 1)]
    manifest = {"version": 1, "name": f"bench-chain-{length}", "worker_files": ["*.worker"],
                "entry": {"worker": "c1"}, "runtime": {"max_depth": length, "approval_mode": "prompt"},
                "defaults": {"model": DEFAULT_MODEL}}
    (root / "project.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for i, name in enumerate(names):
        toolsets = [names[i + 1]] if i + 1 < len(names) else []
        front = ["---", f"description: link {i + 1} of the chain"]
        if toolsets:
            front += ["toolsets:"] + [f"  - {t}" for t in toolsets]
        text = "\n".join(front + ["---"]) + f"\nYou are link {i + 1}. Pass the request on, then report.\n"
        (root / f"{name}.worker").write_text(text, encoding="utf-8")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated worker counts")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for workers-N/ (default bench/.work)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chain-length", type=int, default=CHAIN_LENGTH)
    parser.add_argument("--coordinators", type=int, default=COORDINATORS)
    parser.add_argument("--python-modules", type=int, default=0, help="shared Python tool modules (default none)")
    args = parser.parse_args(argv)
    for n in (int(s) for s in args.sizes.split(",")):
        root = generate_project(args.out / f"workers-{n}", n, seed=args.seed, coordinators=args.coordinators,
                                chain_length=args.chain_length, python_modules=args.python_modules)
        files = sum(1 for _ in root.rglob("*.worker"))
        words = sum(len(p.read_text(encoding="utf-8").split()) for p in root.rglob("*.worker"))
        print(f"{root}: {files} workers, {words // max(files, 1)} words per worker on average")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
