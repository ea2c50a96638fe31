// Drives mcpbox with the official TypeScript MCP SDK's Client, over WebSocketClientTransport or
// SSEClientTransport (the 2024-11-05 HTTP+SSE transport):
//
//   node ts_sdk_client.cjs SDK_DIR ws|sse URL ROOT_NAME
//
// Lists and calls tools, reads resources, gets a prompt, receives progress notifications, and
// answers a plugin's sampling request; exits non-zero, with the reason, on any difference.
// SDK_DIR is where scripts/setup-ts-client.sh installed the SDK.

const { createRequire } = require("node:module");
const path = require("node:path");

const [sdkDir, transportName, url, rootName] = process.argv.slice(2);
const sdk = createRequire(path.join(sdkDir, "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { WebSocketClientTransport } = sdk("@modelcontextprotocol/sdk/client/websocket.js");
const { SSEClientTransport } = sdk("@modelcontextprotocol/sdk/client/sse.js");
const { CreateMessageRequestSchema } = sdk("@modelcontextprotocol/sdk/types.js");

function check(condition, message) {
  if (!condition) {
    console.error(`ts sdk client (${transportName}): ${message}`);
    process.exit(1);
  }
}

async function main() {
  const client = new Client({ name: "mcpbox-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params.messages[0].content.text);
    return { role: "assistant", model: "test-model", content: { type: "text", text: "Paris" } };
  });
  const transport =
    transportName === "ws" ? new WebSocketClientTransport(new URL(url)) : new SSEClientTransport(new URL(url));
  await client.connect(transport);
  check(client.getServerVersion().name === "mcpbox", `server ${JSON.stringify(client.getServerVersion())}`);

  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const expected of ["fs.read_file", "textstats.stats", "conformance.test_simple_text"]) {
    check(names.includes(expected), `${expected} not in ${names}`);
  }
  const notes = `/roots/${rootName}/notes.txt`;
  const read = await client.callTool({ name: "fs.read_file", arguments: { path: notes } });
  check(!read.isError && read.content[0].text === "one two two\n", `read_file gave ${JSON.stringify(read)}`);
  const stats = await client.callTool({ name: "textstats.stats", arguments: { path: notes } });
  check(stats.structuredContent.words === 3, `stats gave ${JSON.stringify(stats)}`);
  const resource = await client.readResource({ uri: "test://static-text" });
  check(resource.contents[0].text === "This is the content of the static text resource.", JSON.stringify(resource));
  const prompt = await client.getPrompt({
    name: "conformance.test_prompt_with_arguments",
    arguments: { arg1: "a", arg2: "b" },
  });
  check(prompt.messages[0].content.text === "Prompt with arguments: arg1='a', arg2='b'", JSON.stringify(prompt));

  const progress = [];
  const withProgress = await client.callTool(
    { name: "conformance.test_tool_with_progress", arguments: {} },
    undefined,
    { onprogress: (update) => progress.push(update.progress) },
  );
  check(!withProgress.isError, `progress tool gave ${JSON.stringify(withProgress)}`);
  // mcpbox sends all three before the result (tests/integration/websocket.rs checks the wire),
  // but the SDK runs notification handlers a microtask late and forgets a request's progress
  // handler as its result arrives, so the last one may be lost when both come in one read.
  check(
    JSON.stringify(progress.slice(0, 2)) === "[0,50]" && progress.length <= 3,
    `progress ${JSON.stringify(progress)}`,
  );
  const sampled = await client.callTool({ name: "conformance.test_sampling", arguments: { prompt: "Capital of France?" } });
  check(sampled.content[0].text === "LLM response: Paris", `sampling gave ${JSON.stringify(sampled)}`);
  check(asked.length === 1 && asked[0] === "Capital of France?", `asked ${JSON.stringify(asked)}`);
  await client.close();
  console.log(`ts sdk client (${transportName}): ok`);
}

main().catch((error) => {
  console.error(`ts sdk client (${transportName}): ${error.stack || error}`);
  process.exit(1);
});
