// Drives the MCP Apps host page (host.html, host.js) in headless Chromium with playwright-core,
// against an mcpbox the test started: bundles the page (esbuild), serves it on 127.0.0.1:PORT,
// waits for the app to render the tool's result inside its sandboxed iframe, clicks the app's
// button (which calls the tool again through the host's bridge), keeps a screenshot, and prints
// what the page and the app show as one JSON line.
// usage: node run.mjs PACKAGES_DIR CHROMIUM PORT MCP_URL PATH SCREENSHOT
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [packages, chromiumPath, port, mcpUrl, path, screenshot] = process.argv.slice(2);
const require = createRequire(join(packages, "package.json"));
const esbuild = require("esbuild");
const { chromium } = require("playwright-core");
const here = dirname(fileURLToPath(import.meta.url));

const site = mkdtempSync(join(tmpdir(), "mcpbox-browser-"));
// Gone however the run ends (a failed page throws).
process.on("exit", () => rmSync(site, { recursive: true, force: true }));
copyFileSync(join(here, "host.html"), join(site, "host.html"));
await esbuild.build({
  entryPoints: [join(here, "host.js")],
  bundle: true,
  format: "esm",
  platform: "browser",
  outfile: join(site, "host.bundle.js"),
  nodePaths: [join(packages, "node_modules")],
  logLevel: "error",
});
const types = { ".html": "text/html", ".js": "text/javascript" };
const server = createServer((request, response) => {
  const name = new URL(request.url, "http://localhost").pathname.slice(1);
  if (name !== "host.html" && name !== "host.bundle.js") {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": types[name.slice(name.lastIndexOf("."))] });
  response.end(readFileSync(join(site, name)));
});
await new Promise((resolve) => server.listen(Number(port), "127.0.0.1", resolve));

// Flags for a closed network: no background connections, no component updates.
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage();
  const consoleLines = [];
  page.on("console", (message) => consoleLines.push(message.text()));
  const query = new URLSearchParams({ mcp: mcpUrl, path });
  await page.goto(`http://127.0.0.1:${port}/host.html?${query}`);
  await page.waitForFunction(
    () => document.getElementById("result").textContent || document.getElementById("error").textContent,
    null,
    { timeout: 30000 },
  );
  const error = await page.textContent("#error");
  if (error) throw new Error(`the host page failed: ${error}`);
  const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
  await frame.waitForSelector(".row", { timeout: 15000 });
  const rows = await frame.$$eval(".row", (all) => all.map((row) => row.textContent.trim()));
  const title = await frame.textContent("#title");
  await frame.click("#recount");
  await frame.waitForFunction(() => document.getElementById("status").textContent.startsWith("counted again"), null, {
    timeout: 15000,
  });
  const status = await frame.textContent("#status");
  const sandbox = await page.getAttribute("iframe", "sandbox");
  await page.screenshot({ path: screenshot, fullPage: true });
  const summary = {
    tools: await page.textContent("#tools"),
    app: await page.textContent("#app"),
    result: await page.textContent("#result"),
    sandbox,
    title,
    rows,
    status,
    console: consoleLines,
  };
  console.log(JSON.stringify(summary));
} finally {
  await browser.close();
  server.close();
}
