// One MCP session between the bridge (the client) and the server's own code (the server), in
// the guest, for one call: the instance is fresh per call, so is the session. The server's
// requests to its client (sampling, elicitation, roots) and its notifications (log, progress,
// resource updates) become the host's imports; everything else it sends is a response to the
// bridge's requests.
import * as host from 'mcpbox:plugin/host@0.1.4';

let transport;
let connected;
const waiting = [];
const pending = new Map();
let nextId = 1;
let exitError;

/** The server's transport started: the server is ready for the bridge's requests. */
export function attach(serverTransport) {
  transport = serverTransport;
  connected = true;
  for (const { resolve } of waiting.splice(0)) resolve();
}

/** The server's process ended before it connected (`process.exit`, a rejected main). */
export function fail(error) {
  exitError = error;
  for (const { reject } of waiting.splice(0)) reject(error);
  for (const { reject } of pending.values()) reject(error);
  pending.clear();
}

/** Resolves once the server has connected its transport. */
export function ready() {
  if (connected) return Promise.resolve();
  if (exitError) return Promise.reject(exitError);
  return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
}

/** Sends a request to the server and waits for its answer. */
export function request(method, params) {
  if (exitError) return Promise.reject(exitError);
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    transport.onmessage?.({ jsonrpc: '2.0', id, method, params });
  });
}

/** Sends a notification to the server. */
export function notify(method, params) {
  transport.onmessage?.({ jsonrpc: '2.0', method, params });
}

/** An error the server answered with, as an Error carrying its JSON-RPC code. */
export class ServerError extends Error {
  constructor({ code, message, data }) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** Everything the server sends. */
export function deliver(message) {
  if (message.method === undefined) {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new ServerError(message.error));
    else waiter.resolve(message.result);
    return;
  }
  if (message.id === undefined) {
    notification(message.method, message.params ?? {});
    return;
  }
  let answer;
  try {
    answer = { result: clientRequest(message.method, message.params ?? {}) };
  } catch (error) {
    // jco's bindings throw a host import's `err` as an error whose payload is the string.
    const why = error.payload ?? error.message ?? error;
    answer = { error: { code: error.code ?? -32603, message: String(why) } };
  }
  transport.onmessage?.({ jsonrpc: '2.0', id: message.id, ...answer });
}

const LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

/** The progress token the bridge puts on every call: the server's progress is this call's. */
export const PROGRESS_TOKEN = 'mcpbox';

function notification(method, params) {
  switch (method) {
    case 'notifications/message': {
      const level = LEVELS.has(params.level) ? params.level : 'info';
      host.log(level, params.logger ?? undefined, JSON.stringify(params.data ?? null));
      break;
    }
    case 'notifications/progress':
      if (typeof params.progress === 'number') {
        host.progress(params.progress, params.total ?? undefined, params.message ?? undefined);
      }
      break;
    case 'notifications/resources/updated':
      if (typeof params.uri === 'string') host.resourceUpdated(params.uri);
      break;
    default:
      // List changes: the host lists a plugin's tools, prompts and templates when it loads
      // (dynamic registration is named in the build's report).
      break;
  }
}

function clientRequest(method, params) {
  switch (method) {
    case 'ping':
      return {};
    case 'sampling/createMessage':
      return answered(host.sample(JSON.stringify(params)));
    case 'elicitation/create':
      return answered(host.elicit(JSON.stringify(params)));
    case 'roots/list': {
      const [answer] = host.ask([{ key: undefined, method: 'list-roots', params: '{}' }]);
      return answered(answer);
    }
    default:
      throw Object.assign(new Error(`mcpbox's bridge does not answer ${method}`), { code: -32601 });
  }
}

// A host import's result<json, string>, as jco's bindings hand it over: the value, or a thrown
// error whose payload is the string.
function answered(value) {
  if (typeof value === 'string') return JSON.parse(value);
  if (value && value.tag === 'ok') return JSON.parse(value.val);
  if (value && value.tag === 'err') throw new Error(value.val);
  return value;
}
