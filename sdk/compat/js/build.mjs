// `mcpbox build` for JavaScript and TypeScript: an unmodified MCP server (a file, a project or an
// npm package) bundled with mcpbox's compatibility layer under it and made a component.
//
//   node build.mjs --source SOURCE --work DIR --out OUT.wasm --report REPORT.json
//
// Steps (each announced on stderr as `step N/5: ...` for mcpbox to show):
//   1. the sources: an npm package installed with `--ignore-scripts` (nothing of it runs on
//      this machine), a project copied and its dependencies installed the same way;
//   2. the entry found (the package's `bin`, else its `main`);
//   3. bundled by esbuild: the SDK's stdio transport replaced by the bridge's (transport.js),
//      Node's built-in modules by the shims in node/ or by stubs that throw when called, every
//      module's `import.meta.url` its own path under /app, and the package's other files
//      embedded (they are what it reads next to its code);
//   4. scanned: what the code reads of the environment, which hosts it names, which shims it
//      uses, and what cannot work in a sandbox (blockers, each with file and line);
//   5. componentized by componentize-js against mcpbox's WIT, unless something blocks it.
// The report is written in every case; the exit status says whether a component was made.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { scan } from './scan.mjs';
import { OUTSIDE, checkInstalled, checkManifest, copyProject, inside, projectOf, realRoots } from './hygiene.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// The toolchain's packages (esbuild, componentize-js, and the npm packages shims are made of)
// resolve from here, never from the server's own node_modules.
const require = createRequire(join(here, 'build.mjs'));
const BUILTINS = new Set(require('node:module').builtinModules);
// An npm package of the toolchain by name (`buffer/`: the package, not Node's module).
const toolchain = (name) => require.resolve(`${name}/`);
// `--NAME VALUE` pairs (`--include DIR` repeatable), and switches that only the test suite's
// mcpbox passes (each turns a protection off to prove a test guards it).
const SWITCHES = new Set(['--run-install-scripts', '--with-build-environment', '--follow-links', '--allow-outside-imports', '--any-dependency', '--keep-builder-paths']);
const switches = new Set(process.argv.filter((arg) => SWITCHES.has(arg)));
const pairs = process.argv.slice(2).filter((arg) => !SWITCHES.has(arg))
  .reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []);
const options = Object.fromEntries(pairs);
// Directories outside the project the user named (--include): links and imports may go there.
const includes = pairs.filter(([name]) => name === 'include').map(([, dir]) => dir);
const report = { language: 'javascript', source: options.source, blockers: [], shims: [], stubs: [], environment: [], hosts: [], notes: [] };
const steps = 5;
let step = 0;
function announce(what) {
  step += 1;
  console.error(`step ${step}/${steps}: ${what}`);
}
function finish(status) {
  writeFileSync(options.report, JSON.stringify(report, null, 2));
  process.exit(status);
}
function refuse(message) {
  report.error = message;
  console.error(`error: ${message}`);
  finish(1);
}
// Stops the build on what the report's blockers say (exit 2: a refusal with reasons).
function blocked(what) {
  if (!report.blockers.length) return;
  console.error(`error: ${what}:`);
  for (const b of report.blockers) console.error(`  ${b.at}: ${b.what} (${b.why})`);
  report.error = `${report.blockers.length} blocker(s)`;
  finish(2);
}

// Files embedded for the server to read next to its code: at most this much in all.
const EMBED_LIMIT = 4 << 20;
// What npm and the bundler may take (an install is the network's, a bundle the CPU's).
// `--ignore-scripts`: no install script of the server or of any dependency runs on this
// machine (they are code the build has not sandboxed).
const NPM = ['install', ...(switches.has('--run-install-scripts') ? [] : ['--ignore-scripts']), '--no-audit', '--no-fund', '--loglevel=error', '--no-save'];

function npm(cwd, args) {
  const run = spawnSync('npm', [...NPM, ...args], { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (run.status !== 0) refuse(`npm install ${args.join(' ')} failed (status ${run.status})`);
}

// --- 1. sources ---------------------------------------------------------------------------
announce(`installing ${options.source} (npm, --ignore-scripts)`);
const app = join(options.work, 'app');
mkdirSync(app, { recursive: true });
let packageDir;
let entry;
// The project and the directories the user named (links resolved); none for an npm package.
let projectRoots = [];
const source = options.source;
if (source.startsWith('npm:')) {
  const spec = source.slice(4);
  // A package of the registry, by name and version: never a path, a URL or a git repository.
  if (!/^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*(@[^/:\s]+)?$/.test(spec)) {
    refuse(`${source} is not a package of the registry (npm:NAME@VERSION)`);
  }
  const name = spec.startsWith('@') ? `@${spec.slice(1).split('@')[0]}` : spec.split('@')[0];
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'mcpbox-build', private: true }));
  npm(app, [spec]);
  packageDir = join(app, 'node_modules', name);
} else {
  // The project the user named, links resolved: its files, and nothing else of this machine.
  const path = resolve(source);
  if (!existsSync(path)) refuse(`${source} does not exist`);
  const isDir = statSync(path).isDirectory();
  const project = realpathSync(isDir ? path : projectOf(path, options.home) ?? dirname(path));
  projectRoots = realRoots([project, ...includes]);
  if (switches.has('--follow-links')) {
    cpSync(project, app, { recursive: true, dereference: true, filter: (from) => !/[\\/](node_modules|\.git)$/.test(from) });
  } else {
    copyProject(project, app, projectRoots, report.blockers);
  }
  if (!switches.has('--any-dependency')) checkManifest(app, [realpathSync(app), ...projectRoots], report.blockers);
  blocked(`${source} takes what is not its own`);
  packageDir = app;
  if (!isDir) entry = join(app, relative(project, realpathSync(path)));
  if (existsSync(join(app, 'package.json'))) {
    npm(app, []);
    if (!switches.has('--any-dependency')) checkInstalled(app, [realpathSync(options.work), ...projectRoots], report.blockers);
    blocked(`${source}'s dependencies are not all from the registry`);
  } else {
    // A lone file: what it imports by bare name, from the registry.
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'mcpbox-build', private: true, type: 'module' }));
    const text = readFileSync(entry, 'utf8');
    const bare = new Set([...text.matchAll(/(?:from|import|require\()\s*['"]([^'"./][^'"]*)['"]/g)].map((m) => m[1])
      .filter((s) => !s.startsWith('node:') && !BUILTINS.has(s.split('/')[0]))
      .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0])));
    if (bare.size) npm(app, [...bare]);
  }
}

// --- 2. entry -----------------------------------------------------------------------------
announce('finding the entry');
const manifest = existsSync(join(packageDir, 'package.json')) ? JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) : {};
report.package = { name: manifest.name, version: manifest.version };
if (!entry) {
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  const candidates = [bin, manifest.main, 'dist/index.js', 'build/index.js', 'index.js', 'src/index.ts', 'index.ts'].filter(Boolean);
  const found = candidates.map((c) => join(packageDir, c)).find((c) => existsSync(c));
  if (!found) refuse(`cannot find the entry of ${manifest.name ?? source}: no \`bin\` or \`main\`, no index.js`);
  entry = found;
}
report.entry = relative(packageDir, entry);
// What no scan can see, true of every built server.
report.notes.push('each call runs the server afresh: what it keeps in memory between calls (a history, a cache, a session) starts empty on every call; keep it in a granted directory instead');
for (const flavour of ['@modelcontextprotocol/sdk', '@modelcontextprotocol/server']) {
  const sdkManifest = [join(packageDir, 'node_modules', flavour, 'package.json'), join(app, 'node_modules', flavour, 'package.json')].find(existsSync);
  if (sdkManifest) {
    report.sdk = { package: flavour, version: JSON.parse(readFileSync(sdkManifest, 'utf8')).version };
    break;
  }
}
if (!report.sdk) refuse(`${manifest.name ?? source} does not use the MCP TypeScript SDK (@modelcontextprotocol/sdk): mcpbox build bridges servers written with it`);

// --- 3. bundle ----------------------------------------------------------------------------
announce('bundling (esbuild) with the compatibility layer');
const { build } = require('esbuild');
const SHIMS = {
  fs: 'node/fs.js', 'fs/promises': 'node/fs-promises.js', path: 'path-browserify', os: 'node/os.js', url: 'node/url.js',
  buffer: 'buffer', events: 'events', crypto: 'node/crypto.js', zlib: 'node/zlib.js', util: 'node/util.js',
  process: 'node/process.js', 'node-fetch': 'node/fetch.js', undici: 'node/fetch.js', 'cross-fetch': 'node/fetch.js',
  'isomorphic-fetch': 'node/fetch.js', 'path/posix': 'path-browserify', tty: 'node/tty.js',
  module: 'node/module.js',
};
// Importing these works; calling them throws (a sandbox has no processes, sockets or threads).
const STUBS = {
  child_process: ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'],
  http: ['createServer', 'request', 'get', 'Agent', 'Server', 'IncomingMessage', 'ServerResponse', 'STATUS_CODES', 'METHODS'],
  https: ['createServer', 'request', 'get', 'Agent', 'Server'],
  http2: ['createServer', 'connect', 'constants'],
  net: ['createServer', 'createConnection', 'connect', 'Socket', 'Server', 'isIP', 'isIPv4', 'isIPv6'],
  tls: ['connect', 'createServer', 'TLSSocket', 'createSecureContext'],
  dgram: ['createSocket'],
  dns: ['lookup', 'resolve', 'promises'],
  worker_threads: ['Worker', 'isMainThread', 'parentPort', 'workerData', 'threadId'],
  cluster: ['fork', 'isPrimary', 'isMaster', 'isWorker'],
  readline: ['createInterface', 'emitKeypressEvents'],
  stream: ['Readable', 'Writable', 'Duplex', 'Transform', 'PassThrough', 'pipeline', 'finished'],
  'stream/promises': ['pipeline', 'finished'],
  string_decoder: ['StringDecoder'],
  assert: ['ok', 'equal', 'strictEqual', 'deepStrictEqual'],
  querystring: ['parse', 'stringify', 'escape', 'unescape'],
  v8: ['serialize', 'deserialize'],
  vm: ['runInNewContext', 'Script', 'createContext'],
  async_hooks: ['AsyncLocalStorage', 'AsyncResource', 'createHook'],
  perf_hooks: ['performance', 'PerformanceObserver'],
  inspector: ['open'],
  express: ['Router', 'json', 'static', 'urlencoded'],
};
const uses = [];
// Where an import may resolve: the build's own directory (the project's copy and what npm
// installed), mcpbox's layer and toolchain, and the project and what the user named.
let importRootsMemo;
const importRoots = () => (importRootsMemo ??= realRoots([options.work, dirname(here), ...projectRoots]));
const compat = {
  name: 'mcpbox-compat',
  setup(b) {
    b.onResolve({ filter: /^mcpbox-server-entry$/ }, () => ({ path: entry }));
    b.onResolve({ filter: /^(wasi|mcpbox):/ }, (args) => ({ path: args.path, external: true }));
    b.onResolve({ filter: /^mcpbox-embedded$/ }, () => ({ path: 'mcpbox-embedded', namespace: 'mcpbox-embedded' }));
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind === 'entry-point' || args.pluginData?.mcpboxChecking) return undefined;
      const bare = args.path.replace(/^node:/, '');
      const importer = args.importer;
      if (importer.startsWith(here)) {
        if (SHIMS[bare] && !SHIMS[bare].startsWith('node/')) return { path: toolchain(SHIMS[bare]) };
        return undefined;
      }
      if (SHIMS[bare]) {
        uses.push({ module: bare, kind: 'shim', importer });
        const target = SHIMS[bare];
        return { path: target.startsWith('node/') ? join(here, target) : toolchain(target) };
      }
      if (STUBS[bare] && (args.path.startsWith('node:') || BUILTINS.has(bare.split('/')[0]) || bare === 'express')) {
        uses.push({ module: bare, kind: 'stub', importer });
        return { path: bare, namespace: 'mcpbox-stub' };
      }
      if (args.path.endsWith('.node')) {
        uses.push({ module: args.path, kind: 'native', importer });
        return { path: args.path, namespace: 'mcpbox-stub' };
      }
      if (switches.has('--allow-outside-imports')) return undefined;
      // Resolved as esbuild would (absolute paths, tsconfig paths, package maps and links
      // included), then kept only inside the build's own directory, the project and what the
      // user named: an import of a file of this machine is refused with its file and line.
      const resolved = await b.resolve(args.path, {
        kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, namespace: args.namespace, pluginData: { mcpboxChecking: true },
      });
      if (resolved.errors.length || resolved.external || resolved.namespace !== 'file' || !resolved.path) return undefined;
      if (!inside(resolved.path, importRoots())) return { errors: [{ text: `imports ${args.path} (${resolved.path}): ${OUTSIDE}` }] };
      return { path: resolved.path, sideEffects: resolved.sideEffects, suffix: resolved.suffix };
    });
    b.onLoad({ filter: /.*/, namespace: 'mcpbox-stub' }, (args) => {
      const names = STUBS[args.path] ?? [];
      const lines = [`const refuse = (name) => function () { throw new Error(${JSON.stringify(args.path)} + '.' + name + ' is not available in an mcpbox plugin (no processes, sockets or threads)'); };`];
      lines.push(`const module = new Proxy(function () {}, { get: (_, name) => (name === '__esModule' ? false : typeof name === 'symbol' ? undefined : refuse(name)), apply: () => refuse('()')() });`);
      names.forEach((name, i) => lines.push(`const stub${i} = refuse(${JSON.stringify(name)});`, `export { stub${i} as ${name} };`));
      lines.push('export default module;');
      return { contents: lines.join('\n'), loader: 'js' };
    });
    b.onLoad({ filter: /.*/, namespace: 'mcpbox-embedded' }, () => ({ contents: embedded(), loader: 'js' }));
    // The SDK's stdio transport, whichever way it is imported: the bridge's.
    // (`dist/esm/` and `dist/cjs/` since 1.1, `dist/` before.)
    b.onLoad({ filter: /@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]((esm|cjs)[\\/])?server[\\/]stdio\.js$/ }, () => ({
      contents: `export { StdioServerTransport } from ${JSON.stringify(join(here, 'transport.js'))};`,
      loader: 'js',
    }));
    // SDK v2 (`@modelcontextprotocol/server`): its stdio module keeps `serveStdio` (which
    // tells the eras apart on the first message) with the bridge's transport in place of the
    // one over stdin and stdout, the default `serveStdio` and the server's own code construct.
    b.onLoad({ filter: /@modelcontextprotocol[\\/]server[\\/]dist[\\/]stdio\.(mjs|cjs)$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const declaration = 'var StdioServerTransport = class {';
      if (!text.includes(declaration)) return undefined;
      const bridge = JSON.stringify(join(here, 'transport.js'));
      const imported = args.path.endsWith('.cjs')
        ? `const { StdioServerTransport: BridgeTransport } = require(${bridge});\n`
        : `import { StdioServerTransport as BridgeTransport } from ${bridge};\n`;
      return {
        contents: imported + text.replace(declaration, 'var StdioServerTransport = BridgeTransport;\nvar NodeStdioServerTransport = class {'),
        loader: 'js',
      };
    });
    // Each module's own URL under /app, as if the package were installed there.
    b.onLoad({ filter: /\.(m|c)?(j|t)sx?$/ }, (args) => {
      if (args.path.startsWith(here) || !args.path.startsWith(app)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const url = `file:///app/${relative(app, args.path).split(sep).join('/')}`;
      const loader = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.jsx': 'jsx' }[extname(args.path)] ?? 'js';
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(url)).replaceAll('import.meta.dirname', JSON.stringify(dirname(url.slice(7)))).replaceAll('import.meta.filename', JSON.stringify(url.slice(7))), loader };
    });
  },
};

// The package's own files other than code, under /app, for fs to serve read-only.
const embeddedFiles = [];
function embedded() {
  let total = 0;
  const files = {};
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      // The staged copy holds no link (copyProject); a package npm installed may: never
      // followed (what it points at is no file of the package's).
      const stat = switches.has('--follow-links') ? statSync(path) : lstatSync(path);
      if (stat.isSymbolicLink()) continue;
      if (stat.isDirectory()) walk(path);
      else if (!/\.(m|c)?(j|t)sx?$|\.map$|\.d\.ts$/.test(name) && total + stat.size <= EMBED_LIMIT) {
        total += stat.size;
        const guest = `/app/${relative(app, path).split(sep).join('/')}`;
        files[guest] = readFileSync(path).toString('base64');
        embeddedFiles.push(guest);
      }
    }
  };
  walk(packageDir);
  return `export default ${JSON.stringify(files)};`;
}

// The libraries every bridged server shares, run at build time (pre-initialized into the
// snapshot) instead of in every call: the MCP SDK's modules and zod that the server's code
// reaches. Their top-level code defines classes and schemas and reads nothing of the machine;
// and pre-initialization could not let it (Wizer traps any import a module calls then: no
// environment, clock, random numbers or files). If it traps all the same, the build goes on
// without (every module then runs per call).
const PRELOADED = /[\\/]node_modules[\\/](@modelcontextprotocol[\\/](sdk|server|core)|zod)[\\/].*\.(m|c)?js$/;
let preload = [];
function entryPoint() {
  if (switches.has('--with-build-environment')) return join(here, 'preinitialized.js');
  if (!preload.length) return join(here, 'bridge.js');
  const entry = join(options.work, 'entry.js');
  const lines = preload.map((p) => `import ${JSON.stringify(p)};`);
  // The SDK's message schemas parse a call's messages once at build time: zod compiles each
  // schema's fast path on its first parse, which a fresh instance would otherwise redo in
  // every call (warm.js).
  const types = preload.find((p) => /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]((esm|cjs)[\\/])?types\.js$/.test(p));
  if (types) lines.push(`import * as types from ${JSON.stringify(types)};`, `import { warm } from ${JSON.stringify(join(here, 'warm.js'))};`, 'warm(types);');
  lines.push(`export * from ${JSON.stringify(join(here, 'bridge.js'))};`);
  writeFileSync(entry, lines.join('\n'));
  return entry;
}

// A stub exports the names its importers ask for: each bundling that finds an import a stub
// lacks adds it and goes again.
async function bundleWithStubs() {
  for (let attempt = 0; ; attempt++) {
    try {
      return await bundleOnce();
    } catch (error) {
      const missing = (error.errors ?? []).map((e) => e.text.match(/^No matching export in "mcpbox-stub:([^"]+)" for import "([^"]+)"$/)).filter(Boolean);
      if (!missing.length || attempt > 8) throw error;
      for (const [, module, name] of missing) (STUBS[module] ??= []).includes(name) || STUBS[module].push(name);
    }
  }
}

let bundle;
try {
  bundle = await bundleWithStubs();
  preload = Object.keys(bundle.metafile.inputs).map((p) => resolve(p)).filter((p) => PRELOADED.test(p));
  if (preload.length) bundle = await bundleWithStubs();
} catch (error) {
  // Imports outside the project: each a blocker with its file and line.
  for (const e of (error.errors ?? []).filter((e) => e.text.endsWith(OUTSIDE))) {
    const at = e.location ? `${relative(app, e.location.file).split(sep).join('/')}:${e.location.line}` : 'the bundle';
    report.blockers.push({ at, what: e.text.slice(0, e.text.length - OUTSIDE.length - 2), why: OUTSIDE });
  }
  blocked(`${source} imports what is not its own`);
  const first = error.errors?.[0];
  const where = first?.location ? ` (${relative(app, first.location.file)}:${first.location.line})` : '';
  refuse(`bundling failed: ${first?.text ?? error.message}${where}`);
}

function bundleOnce() {
  uses.length = 0;
  embeddedFiles.length = 0;
  return build({
    entryPoints: [entryPoint()],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    // The JavaScript engine has no Unicode property escapes: such a literal would fail the
    // whole bundle at parse time; as `new RegExp(...)` it fails only where it runs.
    supported: { 'regexp-unicode-property-escapes': false },
    write: false,
    metafile: true,
    logLevel: 'silent',
    mainFields: ['module', 'main'],
    // A dependency's path stays under node_modules (a `file:` dependency is a symlink there),
    // so the scan knows it as a package.
    preserveSymlinks: true,
    conditions: ['import', 'module', 'default'],
    inject: [join(here, 'node/globals.js')],
    define: {
      __dirname: '"/app"',
      __filename: '"/app/index.js"',
      'process.env.NODE_ENV': '"production"',
      __MCPBOX_BUILD_ENVIRONMENT__: switches.has('--with-build-environment') ? JSON.stringify(process.env) : '{}',
    },
    plugins: [compat],
  });
}
// esbuild names each module (in a comment, and as the key of a CommonJS module's wrapper) by
// its path from the work directory: mcpbox's own files would be named by where this machine
// keeps the toolchain (under the builder's home), and the source text is kept in the
// component. They are named `mcpbox/...` instead.
function withoutBuilderPaths(text) {
  if (switches.has('--keep-builder-paths')) return text;
  const tools = dirname(here);
  return text.replaceAll(`${relative(options.work, tools).split(sep).join('/')}/`, 'mcpbox/').replaceAll(tools, '/mcpbox');
}
const bundlePath = join(options.work, 'bundle.js');
writeFileSync(bundlePath, withoutBuilderPaths(bundle.outputFiles[0].text));
report.embedded = embeddedFiles.map((f) => f.slice('/app/'.length));
report.bundle_bytes = bundle.outputFiles[0].contents.length;

// --- 4. scan ------------------------------------------------------------------------------
announce('scanning for environment, hosts, shims and blockers');
const inputs = Object.keys(bundle.metafile.inputs).filter((p) => !p.includes(':')).map((p) => resolve(p));
const scanned = scan({ app, packageDir, inputs: inputs.filter((p) => p.startsWith(app)), uses });
Object.assign(report, scanned, { notes: [...report.notes, ...scanned.notes] });
if (report.blockers.length) {
  console.error(`error: ${manifest.name ?? source} cannot run in a sandbox:`);
  for (const b of report.blockers) console.error(`  ${b.at}: ${b.what} (${b.why})`);
  report.error = `${report.blockers.length} blocker(s)`;
  finish(2);
}

// --- 5. componentize ----------------------------------------------------------------------
announce('componentizing (componentize-js)');
// mcpbox's WIT and a world of its own: the plugin's exports and imports, and the WASI
// interfaces the shims call (the environment for `process`, the preopens for `fs`), at the
// version the JavaScript engine itself imports. jco ships their WIT (0.2.12, the same
// interfaces).
const wit = join(options.work, 'wit');
mkdirSync(join(wit, 'deps'), { recursive: true });
cpSync(options.wit, join(wit, 'plugin.wit'));
writeFileSync(join(wit, 'bridged.wit'), `package mcpbox:plugin@0.1.4;

world bridged {
    import host;
    import wasi:cli/environment@0.2.10;
    import wasi:filesystem/types@0.2.10;
    import wasi:filesystem/preopens@0.2.10;
    export tools;
    export resources;
    export prompts;
    export completion;
}
`);
const wasiWit = join(here, '..', 'node_modules', '@bytecodealliance', 'jco', 'lib', 'wit', 'builtin', '0.2.12');
for (const name of ['wasi-cli', 'wasi-clocks', 'wasi-filesystem', 'wasi-io', 'wasi-random', 'wasi-sockets']) {
  mkdirSync(join(wit, 'deps', name), { recursive: true });
  const text = readFileSync(join(wasiWit, name, 'package.wit'), 'utf8').replaceAll('@0.2.12', '@0.2.10');
  writeFileSync(join(wit, 'deps', name, 'package.wit'), text);
}
const { componentize } = await import('@bytecodealliance/componentize-js');
let component;
try {
  component = await make(bundlePath);
  report.preinitialized = preload.map((p) => relative(app, p).split(sep).join('/')).filter((p, i, all) => all.indexOf(p) === i).length;
} catch (error) {
  if (!preload.length) throw error;
  console.error(`pre-initializing the SDK failed (${String(error.message).split('\n')[0]}): every module runs per call`);
  preload = [];
  bundle = await bundleWithStubs();
  writeFileSync(bundlePath, withoutBuilderPaths(bundle.outputFiles[0].text));
  component = await make(bundlePath);
  report.preinitialized = 0;
}
writeFileSync(options.out, component);
report.component_bytes = component.length;
finish(0);

async function make(sourcePath) {
  const made = await componentize({
    sourcePath,
    witPath: wit,
    worldName: 'bridged',
    // fetch (wasi:http) only for a server that names it: the host links wasi:http only for
    // plugins granted a network.
    disableFeatures: report.uses_fetch ? [] : ['http', 'fetch-event'],
    // Nothing of the build machine in the snapshot: the bridge's own top level and the
    // preloaded libraries run at build time, the server's code only when a call runs.
    env: {},
  });
  return made.component;
}
