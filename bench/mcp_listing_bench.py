"""CPU of listing one MCP server's tools at build, as whole processes.

    python bench/mcp_listing_bench.py            # 9 rounds
    python bench/mcp_listing_bench.py --runs 15

`llm-do build` lists a project's MCP servers in a child process (`llm_do.compiler.facts.mcp_child`),
with the official `mcp` client. The baseline, in the same rounds, is the same listing with FastMCP's
client over the transport a run's toolsets use (`mcp_transport.transport`): how the child listed
before. Both start the same small stdio server (written here with the official `mcp` package), so
the difference is what the client costs. Rounds alternate the order; CPU is the process's and its
children's (user + system).

Target: the child costs at most 0.9 of the FastMCP listing's CPU (the server, about 1 CPU-s, is in both).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from _common import Series, machine, seconds, table, verdict, versions

TARGET = 0.9

SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run()
'''

FASTMCP_LISTING = '''
import asyncio, json, os, sys, tempfile
from pathlib import Path
from fastmcp import Client
from llm_do.runtime.toolsets.mcp_transport import transport

request = json.loads(sys.stdin.read())

async def main():
    with tempfile.TemporaryFile("w+") as log:
        for config in request["servers"].values():
            client = Client(transport(config, Path(request["root"]), dict(os.environ), log), timeout=60, init_timeout=60)
            async with client:
                tools = await client.list_tools()
            print(json.dumps(sorted(t.name for t in tools)))

asyncio.run(main())
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "server.py").write_text(SERVER, encoding="utf-8")
        request = json.dumps({"root": str(root), "start_timeout": 60,
                              "servers": {"bench": {"command": sys.executable, "args": [str(root / "server.py")]}}})
        (root / "request.json").write_text(request, encoding="utf-8")
        feed = f"import sys; sys.stdin = open({str(root / 'request.json')!r}); "
        commands = {
            "mcp client (llm-do's listing child)": [sys.executable, "-c", feed + "import runpy; "
                                                    "runpy.run_module('llm_do.compiler.facts.mcp_child', run_name='__main__')"],
            "FastMCP client (baseline)": [sys.executable, "-c", feed + FASTMCP_LISTING],
        }
        series = {label: Series(label) for label in commands}
        labels = list(commands)
        for label in labels:  # warm-up, and both list the same two tools
            out = series[label].add(commands[label])
            assert "echo" in out and "add" in out, out
            series[label].times.clear()
            series[label].cpu.clear()
        for r in range(args.runs):
            for label in (labels if r % 2 == 0 else labels[::-1]):
                series[label].add(commands[label])
    child, base = (series[label] for label in labels)
    ratio = statistics.median(c / b for c, b in zip(child.cpu, base.cpu))
    print(f"MCP listing at build, {args.runs} rounds ({machine()}; {versions()})")
    print(table(["listing", "CPU median", "wall median"],
                [[s.label, seconds(s.cpu_median), seconds(s.median)] for s in (child, base)]))
    print(f"CPU ratio, child / baseline (median of paired rounds): {ratio:.2f}  target <= {TARGET}: {verdict(ratio <= TARGET)}")


if __name__ == "__main__":
    main()
