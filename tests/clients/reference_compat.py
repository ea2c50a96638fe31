"""Compares a bundled plugin with the official reference server it replaces.

usage: reference_compat.py SPEC.json

SPEC names the plugin, how to start the reference server and mcpbox over stdio (command, args,
env), and the inputs both get: `roots` (the reference's tree and mcpbox's, same content, so the
results compare with the paths swapped), `base_url` (fetch: the test's local web server). Both
servers are driven with the official MCP Python SDK:

1. the tool lists match: the same names, and each tool's input schema equal once descriptions
   and titles are left out (argument names, types, required arguments, bounds);
2. the same sequence of calls (the plugin's scenario below) gives the same results: content,
   structured content and isError, after the normalization the scenario asks for (the tree's
   path, the current time).

Exits non-zero with every difference listed.
"""

import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import reference_scenarios


def strip_descriptions(schema):
    """The schema without what may differ: descriptions and titles."""
    if isinstance(schema, dict):
        return {k: strip_descriptions(v) for k, v in schema.items() if k not in ("description", "title")}
    if isinstance(schema, list):
        return [strip_descriptions(v) for v in schema]
    return schema


def result_of(result):
    """A tool result as plain data: what a client reads."""
    content = []
    for block in result.content:
        data = block.model_dump(by_alias=True, exclude_none=True, mode="json")
        data.pop("_meta", None)
        content.append(data)
    return {"isError": bool(result.is_error), "content": content, "structuredContent": result.structured_content}


async def run_server(server, calls, normalize, alone=None):
    """Starts one server, lists its tools and makes every call; returns (tools, results, and
    the problems `alone` finds when given: checks of mcpbox alone, after the calls)."""
    env = {**os.environ, **server.get("env", {})}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env)
    errlog = open(server["stderr"], "w") if server.get("stderr") else sys.stderr
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        results = []
        for call in calls:
            try:
                result = result_of(await session.call_tool(call["tool"], call["arguments"]))
            except Exception as error:  # a JSON-RPC error: compared by its presence
                result = {"protocolError": True, "message": str(error)}
            results.append(normalize(result))
        return tools, results, (await alone(session) if alone else [])


def compare_tools(reference, mcpbox):
    problems = []
    if set(reference) != set(mcpbox):
        problems.append(f"tool names differ: reference {sorted(reference)}, mcpbox {sorted(mcpbox)}")
    for name in sorted(set(reference) & set(mcpbox)):
        ours, theirs = strip_descriptions(mcpbox[name].input_schema), strip_descriptions(reference[name].input_schema)
        if ours != theirs:
            problems.append(f"{name}: input schemas differ\n  reference {json.dumps(theirs)}\n  mcpbox    {json.dumps(ours)}")
        ours, theirs = strip_descriptions(mcpbox[name].output_schema), strip_descriptions(reference[name].output_schema)
        if ours != theirs:
            problems.append(f"{name}: output schemas differ\n  reference {json.dumps(theirs)}\n  mcpbox    {json.dumps(ours)}")
    return problems


async def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    scenario = reference_scenarios.SCENARIOS[spec.get("scenario", spec["plugin"])](spec)
    scenario.prepare()
    reference_tools, reference_results, _ = await run_server(
        spec["reference"], scenario.calls("reference"), scenario.normalizer("reference")
    )
    mcpbox_tools, mcpbox_results, alone_problems = await run_server(
        spec["mcpbox"], scenario.calls("mcpbox"), scenario.normalizer("mcpbox"), scenario.mcpbox_alone
    )
    problems = compare_tools(reference_tools, mcpbox_tools) + alone_problems
    calls = scenario.calls("reference")
    for index, (call, theirs, ours) in enumerate(zip(calls, reference_results, mcpbox_results)):
        what = call["tool"]
        difference = scenario.compare(call, theirs, ours)
        if difference:
            problems.append(
                f"call {index} ({what} {json.dumps(call.get('arguments'))[:200]}): {difference}\n"
                f"  reference {json.dumps(theirs)[:3000]}\n  mcpbox    {json.dumps(ours)[:3000]}"
            )
    problems += scenario.after()
    if problems:
        print(f"{spec['plugin']}: {len(problems)} differences from the reference server", file=sys.stderr)
        for problem in problems:
            print("- " + problem, file=sys.stderr)
        sys.exit(1)
    print(f"{spec['plugin']}: {len(reference_tools)} tools and {len(calls)} calls match the reference server")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    asyncio.run(main(sys.argv[1]))
