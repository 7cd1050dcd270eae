"""A third-party MCP client for `mdiag mcp`: the Python `mcp` SDK's stdio client.

Usage: mcp_client.py MDIAG CWD CALLS [--] [GLOBAL_FLAG...]

Starts `MDIAG mcp GLOBAL_FLAG...` in CWD through the SDK's `stdio_client`,
initializes the session, lists the tools, then calls each of CALLS (a JSON
list of [tool, arguments]) in turn. Prints one JSON document on stdout:

    {"protocol_version": ..., "server": {"name": ..., "version": ...},
     "tools": [{"name", "description", "read_only", "required", "properties"}],
     "calls": [{"tool", "arguments", "is_error", "structured", "text"}]}

It judges nothing itself: tests/mcp_python.rs and the live trial compare
what it got with the CLI's own `-o json` for the same input.
"""

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(mdiag: str, cwd: str, calls: list, flags: list) -> dict:
    params = StdioServerParameters(
        command=mdiag,
        args=["mcp", *flags],
        cwd=cwd,
        env={"LANG": "C"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            tools = [
                {
                    "name": t.name,
                    "description": t.description,
                    "read_only": bool(t.annotations and t.annotations.read_only_hint),
                    "required": sorted(t.input_schema.get("required", [])),
                    "properties": sorted(t.input_schema.get("properties", {})),
                }
                for t in listed.tools
            ]
            answers = []
            for tool, arguments in calls:
                result = await session.call_tool(tool, arguments)
                texts = [c.text for c in result.content if c.type == "text"]
                answers.append(
                    {
                        "tool": tool,
                        "arguments": arguments,
                        "is_error": result.is_error,
                        "structured": result.structured_content,
                        "text": "\n".join(texts),
                    }
                )
            return {
                "protocol_version": init.protocol_version,
                "server": {"name": init.server_info.name, "version": init.server_info.version},
                "tools": sorted(tools, key=lambda t: t["name"]),
                "calls": answers,
            }


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mdiag, cwd, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    flags = [a for a in sys.argv[4:] if a != "--"]
    out = anyio.run(main, mdiag, cwd, calls, flags)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
