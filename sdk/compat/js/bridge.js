// The component's entry: mcpbox's WIT exports (tools, resources, prompts, completion), each a
// short MCP session with the server's own, unmodified code in this fresh instance. The
// server's module runs when the first export is called (not at build time: what it reads of
// the environment, the clock or random numbers belongs to the call), connects its transport
// (transport.js), and answers `initialize` and then the one request the export stands for.
//
// `mcpbox-server-entry` is the server's entry module, resolved by the build (build.mjs).
import { notify, ready, request, ServerError, PROGRESS_TOKEN, fail } from './session.js';
import * as host from 'mcpbox:plugin/host@0.1.4';
import { started } from './node/process.js';
import './locale.js';

// The protocol version the bridge speaks to the server: the newest every SDK 1.x since 1.13
// knows, with structured content, output schemas and elicitation.
const PROTOCOL_VERSION = '2025-06-18';

let session;

/** Runs the server's module once and opens the session (initialize, initialized). */
function open() {
  session ??= (async () => {
    started();
    import('mcpbox-server-entry').catch(fail);
    await ready();
    const capabilities = {};
    if (host.canAsk('sample')) capabilities.sampling = {};
    if (host.canAsk('elicit')) capabilities.elicitation = { form: {} };
    if (host.canAsk('list-roots')) capabilities.roots = {};
    const result = await request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities,
      clientInfo: { name: 'mcpbox', version: '0.1' },
    });
    notify('notifications/initialized', {});
    return result.capabilities ?? {};
  })();
  return session;
}

/** Every page of a list request. */
async function all(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await request(method, cursor ? { cursor } : {});
    items.push(...(page[key] ?? []));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

// A server without a capability answers its list methods with "method not found": nothing.
async function listed(capability, method, key) {
  const capabilities = await open();
  if (!capabilities[capability]) return [];
  try {
    return await all(method, key);
  } catch (error) {
    if (error instanceof ServerError && error.code === -32601) return [];
    throw error;
  }
}

const json = (value) => JSON.stringify(value);
const identifier = (name) => String(name).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100) || 'unnamed';
const opt = (value) => (value === null ? undefined : value);

function bytes(base64) {
  const raw = atob(base64 ?? '');
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function annotations(value) {
  if (!value) return undefined;
  return { audience: opt(value.audience), priority: opt(value.priority), lastModified: opt(value.lastModified) };
}

function contents(value) {
  const body = value.blob !== undefined ? { tag: 'blob', val: bytes(value.blob) } : { tag: 'text', val: value.text ?? '' };
  return { uri: value.uri, mimeType: opt(value.mimeType), body };
}

function block(value) {
  switch (value.type) {
    case 'image':
    case 'audio':
      return { tag: value.type, val: { data: bytes(value.data), mimeType: value.mimeType, annotations: annotations(value.annotations) } };
    case 'resource':
      return { tag: 'embedded', val: { contents: contents(value.resource), annotations: annotations(value.annotations) } };
    case 'resource_link':
      return {
        tag: 'resource-link',
        val: {
          uri: value.uri, name: value.name, title: opt(value.title), description: opt(value.description),
          mimeType: opt(value.mimeType), size: value.size === undefined ? undefined : BigInt(value.size),
          annotations: annotations(value.annotations),
        },
      };
    default:
      return { tag: 'text', val: { text: String(value.text ?? ''), annotations: annotations(value.annotations) } };
  }
}

function message(error) {
  return error?.payload ?? error?.message ?? String(error);
}

export const tools = {
  listTools() {
    return listed('tools', 'tools/list', 'tools').then((list) => list.map((tool) => ({
      name: tool.name,
      title: opt(tool.title ?? tool.annotations?.title),
      description: opt(tool.description),
      inputSchema: json(tool.inputSchema ?? { type: 'object' }),
      outputSchema: tool.outputSchema ? json(tool.outputSchema) : undefined,
      annotations: tool.annotations ? {
        title: opt(tool.annotations.title),
        readOnlyHint: opt(tool.annotations.readOnlyHint),
        destructiveHint: opt(tool.annotations.destructiveHint),
        idempotentHint: opt(tool.annotations.idempotentHint),
        openWorldHint: opt(tool.annotations.openWorldHint),
      } : undefined,
    })));
  },
  async callTool(name, args) {
    await open();
    let result;
    try {
      result = await request('tools/call', { name, arguments: JSON.parse(args), _meta: { progressToken: PROGRESS_TOKEN } });
    } catch (error) {
      if (error instanceof ServerError && error.code === -32602) {
        throw { tag: /unknown tool|not found/i.test(error.message) ? 'unknown-tool' : 'invalid-arguments', val: error.message };
      }
      throw { tag: 'failed', val: message(error) };
    }
    return {
      content: (result.content ?? []).map(block),
      structuredContent: result.structuredContent === undefined ? undefined : json(result.structuredContent),
      isError: result.isError === true,
    };
  },
};

export const resources = {
  listResources() {
    return listed('resources', 'resources/list', 'resources').then((list) => list.map((r) => ({
      uri: r.uri, name: r.name, title: opt(r.title), description: opt(r.description), mimeType: opt(r.mimeType),
      size: r.size === undefined || r.size === null ? undefined : BigInt(r.size), annotations: annotations(r.annotations),
    })));
  },
  listResourceTemplates() {
    // mcpbox names templates as it names tools ([A-Za-z0-9_.-]): a name with other characters
    // ("Dynamic Text Resource") is kept as the title, the name made of its allowed characters.
    return listed('resources', 'resources/templates/list', 'resourceTemplates').then((list) => list.map((t) => ({
      uriTemplate: t.uriTemplate, name: identifier(t.name), title: opt(t.title ?? (identifier(t.name) === t.name ? undefined : t.name)),
      description: opt(t.description),
      mimeType: opt(t.mimeType), annotations: annotations(t.annotations),
    })));
  },
  async readResource(uri) {
    await open();
    try {
      const result = await request('resources/read', { uri });
      return (result.contents ?? []).map(contents);
    } catch (error) {
      if (error instanceof ServerError && (error.code === -32002 || /not found/i.test(error.message))) {
        throw { tag: 'not-found', val: error.message };
      }
      throw { tag: 'failed', val: message(error) };
    }
  },
};

export const prompts = {
  listPrompts() {
    return listed('prompts', 'prompts/list', 'prompts').then((list) => list.map((p) => ({
      name: p.name, title: opt(p.title), description: opt(p.description),
      arguments: (p.arguments ?? []).map((a) => ({
        name: a.name, title: opt(a.title), description: opt(a.description), required: a.required === true,
      })),
    })));
  },
  async getPrompt(name, args) {
    await open();
    try {
      const result = await request('prompts/get', { name, arguments: Object.fromEntries(args) });
      return {
        description: opt(result.description),
        messages: (result.messages ?? []).map((m) => ({ role: m.role, content: block(m.content) })),
      };
    } catch (error) {
      if (error instanceof ServerError && error.code === -32602) {
        throw { tag: /not found|unknown/i.test(error.message) ? 'unknown-prompt' : 'invalid-arguments', val: error.message };
      }
      throw { tag: 'failed', val: message(error) };
    }
  },
};

export const completion = {
  async complete(req) {
    await open();
    const ref = req.reference.tag === 'prompt'
      ? { type: 'ref/prompt', name: req.reference.val }
      : { type: 'ref/resource', uri: req.reference.val };
    try {
      const result = await request('completion/complete', {
        ref,
        argument: { name: req.argumentName, value: req.argumentValue },
        context: { arguments: Object.fromEntries(req.contextArguments) },
      });
      const c = result.completion ?? { values: [] };
      return { values: c.values ?? [], total: opt(c.total), hasMore: c.hasMore === true };
    } catch (error) {
      throw message(error);
    }
  },
};
