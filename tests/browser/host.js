// A small MCP Apps host, as a web page: the official TypeScript SDK's Client over Streamable
// HTTP to mcpbox, and the official ext-apps SDK's AppBridge between that client and the app,
// rendered in a sandboxed iframe (scripts only: no same origin, no forms, no popups) under a
// Content Security Policy built from the resource's `_meta.ui.csp`, as a real host does.
// Bundled by esbuild for tests/browser/run.mjs; `?mcp=URL&path=DIR` say where and what.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const params = new URLSearchParams(location.search);
const say = (id, text) => {
  document.getElementById(id).textContent = text;
};

/** The CSP the spec prescribes by default, widened only by what `ui.csp` declares. */
function contentSecurityPolicy(csp = {}) {
  const list = (domains) => (domains && domains.length ? " " + domains.join(" ") : "");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
    `style-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
    `img-src 'self' data:${list(csp.resourceDomains)}`,
    `media-src 'self' data:${list(csp.resourceDomains)}`,
    `connect-src ${csp.connectDomains && csp.connectDomains.length ? csp.connectDomains.join(" ") : "'none'"}`,
    `frame-src ${csp.frameDomains && csp.frameDomains.length ? csp.frameDomains.join(" ") : "'none'"}`,
    `base-uri ${csp.baseUriDomains && csp.baseUriDomains.length ? csp.baseUriDomains.join(" ") : "'self'"}`,
  ].join("; ");
}

async function main() {
  const client = new Client({ name: "mcpbox-browser-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(params.get("mcp"))));
  const { tools } = await client.listTools();
  say("tools", tools.map((tool) => tool.name).join(" "));
  const tool = tools.find((candidate) => getToolUiResourceUri(candidate));
  const uri = getToolUiResourceUri(tool);
  const read = await client.readResource({ uri });
  const contents = read.contents[0];
  if (contents.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${contents.mimeType}`);
  const ui = (contents._meta && contents._meta.ui) || {};
  say("app", `${tool.name} -> ${uri}`);

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.border = ui.prefersBorder ? "1px solid #999" : "none";
  iframe.width = "480";
  iframe.height = "320";
  document.getElementById("frame").append(iframe);

  const bridge = new AppBridge(client, { name: "mcpbox-browser-host", version: "1.0.0" }, {
    serverTools: {},
    logging: {},
  });
  const args = { path: params.get("path"), top: 5 };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: args });
    const result = await client.callTool({ name: tool.name, arguments: args });
    await bridge.sendToolResult(result);
    say("result", `sent ${tool.name} result to the app`);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  const policy = `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(ui.csp)}">`;
  iframe.srcdoc = contents.text.replace("<head>", `<head>${policy}`);
}

main().catch((error) => say("error", String((error && error.stack) || error)));
