// What a bundled server reads and needs, for the build's report: the environment variables and
// hosts its own code names, the shims and stubs its modules import, and what cannot work in a
// sandbox (blockers), each with the file and line that needs it. A scan of source text: it
// finds what the code says (`process.env.NAME`, `"https://host/..."`, `spawn(`), not what it
// computes; the report says so.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

// Packages that drive a browser: nothing in a sandbox can start one.
const BROWSERS = ['puppeteer', 'puppeteer-core', 'playwright', 'playwright-core', 'selenium-webdriver', 'chromium-bidi'];
// Calls of a stubbed module that a server makes to do its work (not to offer another
// transport): each is a blocker where the server's code or a dependency of it makes one.
const CALLS = {
  child_process: /\b(spawn|spawnSync|exec|execSync|execFile|execFileSync|fork)\s*\(/,
  worker_threads: /\bnew\s+Worker\s*\(/,
  cluster: /\bcluster\.fork\s*\(/,
  net: /\b(net\.(connect|createConnection)|new\s+(net\.)?Socket)\s*\(/,
  tls: /\btls\.connect\s*\(/,
  dgram: /\bcreateSocket\s*\(/,
  http: /\bhttps?\.(request|get)\s*\(/,
  https: /\bhttps?\.(request|get)\s*\(/,
  http2: /\bhttp2\.connect\s*\(/,
  dns: /\bdns\.(lookup|resolve\w*)\s*\(/,
};
const WHY = {
  child_process: 'starts a process',
  worker_threads: 'starts a thread',
  cluster: 'starts processes',
  net: 'opens a raw socket',
  tls: 'opens a raw TLS socket',
  dgram: 'opens a UDP socket',
  http: 'makes requests with Node\'s http module (fetch is bridged; http.request is not)',
  https: 'makes requests with Node\'s https module (fetch is bridged; https.request is not)',
  http2: 'opens an HTTP/2 session',
  dns: 'resolves names itself',
};

// The SDK's own files (v1's one package, v2's server and core) are not the server's code.
const isSdk = (path) => ['sdk', 'server', 'core'].some((name) => path.includes(`${sep}node_modules${sep}@modelcontextprotocol${sep}${name}${sep}`));
const lines = new Map();
function textOf(path) {
  if (!lines.has(path)) lines.set(path, existsSync(path) ? readFileSync(path, 'utf8').split('\n') : []);
  return lines.get(path);
}

export function scan({ app, packageDir, inputs, uses }) {
  const own = (path) => path.startsWith(packageDir) && !relative(packageDir, path).split(sep).includes('node_modules');
  // The server's own files relative to its package, a dependency's from the install.
  const where = (path, line) => `${relative(own(path) ? packageDir : app, path).split(sep).join('/')}:${line}`;
  const environment = new Map();
  const hosts = new Map();
  const blockers = [];
  const notes = new Set();
  let usesFetch = false;
  let writesFiles = false;
  const flavours = new Set();

  for (const path of inputs) {
    if (isSdk(path)) continue;
    const text = textOf(path);
    text.forEach((line, i) => {
      if (/\bfetch\s*\(/.test(line) && !/\bfunction\s+fetch\s*\(/.test(line)) usesFetch = true;
      if (!own(path)) return;
      if (/\bnew\s+McpServer\s*\(/.test(line)) flavours.add('McpServer');
      if (/\bnew\s+Server\s*\(/.test(line)) flavours.add('Server (low-level)');
      for (const m of line.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([^'"]+)['"]\s*\])/g)) {
        const name = m[1] ?? m[2];
        if (name === 'NODE_ENV') continue;
        if (!environment.has(name)) environment.set(name, where(path, i + 1));
      }
      for (const m of line.matchAll(/['"`](https?):\/\/([A-Za-z0-9.-]+)(?::(\d+))?/g)) {
        const host = m[2].toLowerCase();
        if (host === 'localhost' || host.endsWith('.example.com') || host === 'example.com' || !host.includes('.')) continue;
        const origin = `${m[1]}://${host}${m[3] ? `:${m[3]}` : ''}`;
        if (!hosts.has(origin)) hosts.set(origin, where(path, i + 1));
      }
      if (/\b(writeFile|appendFile|mkdir|rename|unlink|rm|copyFile)(Sync)?\s*\(/.test(line)) writesFiles = true;
      if (/\bset(Interval|Timeout)\s*\(/.test(line) && /setInterval/.test(line)) {
        notes.add(`timers: ${where(path, i + 1)} sets an interval; nothing runs between calls (each call is a fresh instance)`);
      }
    });
  }

  // Packages that cannot work in a sandbox, whichever file of them was bundled.
  const packages = new Set();
  for (const path of inputs) {
    const parts = relative(app, path).split(sep);
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) continue;
    const name = parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
    const root = join(app, ...parts.slice(0, at + 1), ...name.split('/'));
    if (packages.has(root)) continue;
    packages.add(root);
    if (BROWSERS.includes(name)) {
      blockers.push({ what: `the package ${name}`, why: 'drives a browser', at: where(path, 1) });
    } else if (existsSync(join(root, 'binding.gyp')) || existsSync(join(root, 'prebuilds'))) {
      blockers.push({ what: `the package ${name}`, why: 'is a native extension (compiled for this machine, not for WebAssembly)', at: where(path, 1) });
    }
  }

  const shims = new Map();
  const stubs = new Map();
  for (const use of uses) {
    if (!use.importer || isSdk(use.importer)) continue;
    const text = textOf(use.importer);
    const specifier = new RegExp(`['"](node:)?${use.module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"]`);
    const line = Math.max(0, text.findIndex((l) => specifier.test(l))) + 1;
    const at = where(use.importer, line);
    if (use.kind === 'native') {
      blockers.push({ what: use.module, why: 'is a native extension (compiled for this machine, not for WebAssembly)', at });
      continue;
    }
    const table = use.kind === 'shim' ? shims : stubs;
    if (!table.has(use.module) || own(use.importer)) table.set(use.module, at);
    const call = CALLS[use.module];
    if (use.kind === 'stub' && call) {
      text.forEach((l, i) => {
        const m = l.match(call);
        if (m) blockers.push({ what: `${use.module}: ${m[0].replace(/\s*\($/, '')}`, why: WHY[use.module], at: where(use.importer, i + 1) });
      });
    }
  }
  const unique = new Map(blockers.map((b) => [`${b.at} ${b.what}`, b]));

  return {
    environment: [...environment].map(([name, at]) => ({ name, at })),
    hosts: [...hosts].map(([origin, at]) => ({ origin, at })),
    shims: [...shims].map(([module, at]) => ({ module, at })),
    stubs: [...stubs].map(([module, at]) => ({ module, at })),
    blockers: [...unique.values()],
    flavour: [...flavours].join(', ') || undefined,
    uses_fetch: usesFetch,
    writes_files: writesFiles,
    notes: [...notes],
  };
}

