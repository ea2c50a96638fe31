// `process` inside the guest: the environment and arguments the operator configured for this
// plugin ([plugin.NAME] env and args), read from WASI when the call runs (never at build time:
// `started` is called by the bridge before the server's module runs); `exit` ends the server
// with an error instead of the process; stdin never delivers data (the bridge is the transport)
// and stdout goes to stderr (a stdio server's stdout is the protocol's).
import { EventEmitter } from 'events';
import { getEnvironment, getArguments } from 'wasi:cli/environment@0.2.10';
import { fail } from '../session.js';

const env = {};
const argv = ['node', '/app/index.js'];
let running = false;

/** The call has begun: the environment and arguments are the call's. */
export function started() {
  if (running) return;
  running = true;
  for (const [name, value] of getEnvironment()) env[name] = value;
  // WASI's arguments begin with the program's name (the plugin's) when the operator gave any.
  argv.push(...getArguments().slice(1));
}

class Exit extends Error {
  constructor(code) {
    super(`the server called process.exit(${code ?? 0})`);
    this.exitCode = code ?? 0;
  }
}

function output(write) {
  const stream = new EventEmitter();
  stream.write = (chunk, encoding, callback) => {
    write(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk));
    (typeof encoding === 'function' ? encoding : callback)?.();
    return true;
  };
  stream.isTTY = false;
  stream.end = () => {};
  return stream;
}

const stdin = new EventEmitter();
stdin.isTTY = false;
stdin.setEncoding = () => stdin;
stdin.resume = () => stdin;
stdin.pause = () => stdin;
stdin.read = () => null;

const start = Date.now();
const processShim = Object.assign(new EventEmitter(), {
  env,
  argv,
  argv0: 'node',
  execArgv: [],
  execPath: '/usr/bin/node',
  pid: 1,
  ppid: 0,
  platform: 'linux',
  arch: 'wasm32',
  version: 'v22.0.0',
  versions: { node: '22.0.0' },
  release: { name: 'node' },
  title: 'mcpbox',
  exitCode: undefined,
  stdin,
  stdout: output((text) => console.error(text.replace(/\n$/, ''))),
  stderr: output((text) => console.error(text.replace(/\n$/, ''))),
  cwd: () => '/',
  chdir: () => { throw new Error('process.chdir is not available in an mcpbox plugin'); },
  exit(code) {
    const error = new Exit(code ?? processShim.exitCode);
    fail(error);
    throw error;
  },
  abort() { processShim.exit(134); },
  kill() { throw new Error('process.kill is not available in an mcpbox plugin'); },
  nextTick: (callback, ...args) => queueMicrotask(() => callback(...args)),
  hrtime: Object.assign((previous) => {
    const now = performance.now();
    const seconds = Math.floor(now / 1000);
    const nanos = Math.floor((now % 1000) * 1e6);
    if (!previous) return [seconds, nanos];
    let s = seconds - previous[0];
    let n = nanos - previous[1];
    if (n < 0) { s -= 1; n += 1e9; }
    return [s, n];
  }, { bigint: () => BigInt(Math.floor(performance.now() * 1e6)) }),
  uptime: () => (Date.now() - start) / 1000,
  memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
  cpuUsage: () => ({ user: 0, system: 0 }),
  emitWarning: (warning) => console.error(String(warning)),
  umask: () => 0o022,
  getuid: () => 1000,
  getgid: () => 1000,
  binding() { throw new Error('process.binding is not available in an mcpbox plugin'); },
});

export default processShim;
export const process = processShim;
