// Write mcpbox plugins in JavaScript: tools, resources and prompts as plain functions.
//
//     import { Plugin, object, string } from './mcpbox.js';
//
//     const plugin = new Plugin();
//     plugin.tool('greet', 'Greets someone by name', object({ name: string('Who to greet') }),
//       ({ name }) => `Hello, ${name}!`);
//
//     export const { tools, resources, prompts, completion } = plugin.exports();
//
// Build with @bytecodealliance/componentize-js against mcpbox's WIT package (world `plugin`),
// without the `http` and `fetch-event` features (see build.mjs). Arguments are checked against
// the tool's schema before the function runs; a mismatch goes back to the model as an error it
// can correct. A function returns a string (text), an object (structured content), content
// blocks, or a `CallResult`; a thrown error becomes a result with `isError: true`.

import * as host from 'mcpbox:plugin/host@0.1.4';

// --- schemas ------------------------------------------------------------------------------

const OPTIONAL = Symbol('optional');

/** A string; `extra` adds JSON Schema keywords (`enum`, `pattern`, `default`, ...). */
export function string(description, extra = {}) {
  return { type: 'string', ...describe(description), ...extra };
}

/** An integer. */
export function integer(description, extra = {}) {
  return { type: 'integer', ...describe(description), ...extra };
}

/** A number. */
export function number(description, extra = {}) {
  return { type: 'number', ...describe(description), ...extra };
}

/** A boolean. */
export function boolean(description, extra = {}) {
  return { type: 'boolean', ...describe(description), ...extra };
}

/** One of the given strings. */
export function oneOf(values, description, extra = {}) {
  return { type: 'string', enum: values, ...describe(description), ...extra };
}

/** An array of `items`. */
export function array(items, description, extra = {}) {
  return { type: 'array', items, ...describe(description), ...extra };
}

/** An object of these properties; each is required unless wrapped in `optional`. */
export function object(properties, description, extra = {}) {
  const schema = { type: 'object', properties: {}, ...describe(description), ...extra };
  const required = [];
  for (const [name, property] of Object.entries(properties)) {
    const { [OPTIONAL]: isOptional, ...plain } = property;
    schema.properties[name] = plain;
    if (!isOptional) required.push(name);
  }
  if (required.length) schema.required = required;
  return schema;
}

/** Marks an object property as optional. */
export function optional(schema) {
  return { ...schema, [OPTIONAL]: true };
}

function describe(description) {
  return description ? { description } : {};
}

/** Checks `value` against the subset of JSON Schema the helpers above produce; returns the
 * first problem, or null. */
export function check(schema, value, path = 'arguments') {
  if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
    return `\`${path}\` must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  switch (schema.type) {
    case 'string':
    case 'boolean':
      if (typeof value !== schema.type) return `\`${path}\` must be a ${schema.type}`;
      break;
    case 'number':
      if (typeof value !== 'number') return `\`${path}\` must be a number`;
      break;
    case 'integer':
      if (!Number.isInteger(value)) return `\`${path}\` must be an integer`;
      break;
    case 'array':
      if (!Array.isArray(value)) return `\`${path}\` must be an array`;
      if (schema.items) {
        for (let i = 0; i < value.length; i++) {
          const problem = check(schema.items, value[i], `${path}[${i}]`);
          if (problem) return problem;
        }
      }
      break;
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return `\`${path}\` must be an object`;
      const properties = schema.properties || {};
      for (const name of schema.required || []) {
        if (!(name in value)) return `missing required argument \`${prefix(path)}${name}\``;
      }
      for (const [name, item] of Object.entries(value)) {
        if (!(name in properties)) {
          if (schema.additionalProperties === false || path === 'arguments') return `unknown argument \`${prefix(path)}${name}\``;
          continue;
        }
        const problem = check(properties[name], item, `${prefix(path)}${name}`);
        if (problem) return problem;
      }
      break;
    }
  }
  return null;
}

function prefix(path) {
  return path === 'arguments' ? '' : `${path}.`;
}

// --- content blocks -----------------------------------------------------------------------

/** A text block. */
export function text(value) {
  return { tag: 'text', val: { text: String(value) } };
}

/** An image from its raw bytes (`Uint8Array`), e.g. `image(png, 'image/png')`. */
export function image(data, mimeType) {
  return { tag: 'image', val: { data, mimeType } };
}

/** An audio clip from its raw bytes (`Uint8Array`). */
export function audio(data, mimeType) {
  return { tag: 'audio', val: { data, mimeType } };
}

/** A resource embedded in a result: text (a string) or bytes (`Uint8Array`). */
export function embedded(uri, mimeType, body) {
  return { tag: 'embedded', val: { contents: contents(uri, mimeType, body) } };
}

/** A link to a resource the client can read later. */
export function link(uri, name) {
  return { tag: 'resource-link', val: { uri, name } };
}

function contents(uri, mimeType, body) {
  const value = body instanceof Uint8Array ? { tag: 'blob', val: body } : { tag: 'text', val: String(body) };
  return { uri, mimeType, body: value };
}

function isContent(value) {
  return value && typeof value === 'object' && typeof value.tag === 'string' && 'val' in value;
}

// --- host services ------------------------------------------------------------------------

/** Logs to the client (if it asked for this level: 'debug', 'info', 'warning', 'error', ...)
 * and to the host's log; `data` is a string or any JSON value. */
export function log(level, data, logger) {
  host.log(level, logger, JSON.stringify(data));
}

/** Reports progress of the current call; sent only if the client asked for progress. */
export function progress(done, total, message) {
  host.progress(done, total, message);
}

/** True once the client cancelled the current call; stop early when it is. */
export function cancelled() {
  return host.cancelled();
}

/** The directories granted to this call: `{ name, guestPath, writable }`. */
export function grantedDirs() {
  return host.grantedDirs();
}

/**
 * Who this call is made for (`{ issuer, subject, scopes }` of the client's access token), if the
 * operator lets this plugin know (`[plugin.NAME] caller = true`) and the server authorizes its
 * clients with OAuth; `undefined` otherwise.
 */
export function caller() {
  return host.caller();
}

/** Tells subscribed clients that the resource at `uri` (one this plugin serves) changed. */
export function resourceUpdated(uri) {
  host.resourceUpdated(uri);
}

/** Asks the client's model (MCP `sampling/createMessage` params in, its result out); `key`
 * names the question in a 2026-07-28 request (see `ask`). */
export function sample(request, key) {
  if (key !== undefined) return askOne(question.sample(request, key));
  return JSON.parse(host.sample(JSON.stringify(request)));
}

/** Asks the client's model one question in text; returns the text of its answer. */
export function sampleText(prompt, maxTokens = 500, key) {
  const result = sample(textRequest(prompt, maxTokens), key);
  return (result.content && result.content.text) || '';
}

/** Asks the user through the client (MCP `elicitation/create`); returns `action` and `content`. */
export function elicit(message, requestedSchema, key) {
  if (key !== undefined) return askOne(question.elicit(message, requestedSchema, key));
  return JSON.parse(host.elicit(JSON.stringify({ message, requestedSchema })));
}

function textRequest(prompt, maxTokens) {
  return { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens };
}

/** Questions for `ask`. `key` is what the question and its answer travel under in a 2026-07-28
 * request: 1 to 64 characters of `[A-Za-z0-9_.-]`, unique in the call; without one, the host
 * numbers the questions (`elicitation-0`, `sampling-1`, ...). */
export const question = {
  elicit: (message, requestedSchema, key) => ({ key, method: 'elicit', params: { message, requestedSchema } }),
  sample: (request, key) => ({ key, method: 'sample', params: request }),
  sampleText: (prompt, maxTokens = 500, key) => question.sample(textRequest(prompt, maxTokens), key),
  /** The client's roots (MCP `roots/list`): its word only; the call may still open only
   * `grantedDirs()`. */
  listRoots: (key) => ({ key, method: 'list-roots', params: {} }),
};

/** Asks the client several questions at once; returns one answer per question, in order: the
 * client's result, or an `Error` saying why there is none. A 2026-07-28 client gets every
 * unanswered question in one round, and the call then runs again with the answers: do what must
 * happen once after asking, or keep a state with `saveState`. */
export function ask(questions) {
  const answers = host.ask(questions.map((q) => ({ key: q.key, method: q.method, params: JSON.stringify(q.params) })));
  return answers.map((a) => (a.tag === 'ok' ? JSON.parse(a.val) : new Error(a.val)));
}

function askOne(q) {
  const [answer] = ask([q]);
  if (answer instanceof Error) throw answer;
  return answer;
}

/** The client's roots (MCP `roots/list`): `{ uri, name }` each. */
export function listRoots(key) {
  return askOne(question.listRoots(key)).roots || [];
}

/** Whether the client can answer `method` ('sample', 'elicit' or 'list-roots'): it declared the
 * capability. A 2026-07-28 request that did not fails the call when asked. */
export function canAsk(method) {
  return host.canAsk(method);
}

/** Keeps `state` (a Uint8Array, at most 64 KiB) for the next round of a 2026-07-28 request: the
 * host seals it into the request's `requestState`, and the retry's `savedState()` returns it. */
export function saveState(state) {
  host.saveState(state);
}

/** The state the previous round of this request kept (a Uint8Array); undefined in the first
 * round and in legacy sessions. */
export function savedState() {
  return host.savedState();
}

/** Goes on with this call as a task (the 2026-07-28 tasks extension), with `status` as its
 * status message: the client gets the task's id now and polls it, the call runs on under the
 * task deadline, and later questions wait for the client's `tasks/update`. Throws an Error with
 * the reason where the operator did not allow tasks for this tool or the request cannot
 * receive one; the call may then simply go on. */
export function detach(status) {
  try {
    host.detach(status);
  } catch (error) {
    throw new Error(typeof error === 'string' ? error : (error?.payload ?? String(error)));
  }
}

// --- the plugin ---------------------------------------------------------------------------

/** An error whose message the model should see as a problem with its arguments. */
export class InvalidArguments extends Error {}

/** A resource read that found nothing at that URI. */
export class NotFound extends Error {}

function callResult(value) {
  if (value === undefined || value === null) return { content: [], isError: false };
  if (typeof value === 'string') return { content: [text(value)], isError: false };
  if (isContent(value)) return { content: [value], isError: false };
  if (Array.isArray(value) && value.every(isContent)) return { content: value, isError: false };
  if (value && Array.isArray(value.content) && typeof value.isError === 'boolean') return value;
  const json = JSON.stringify(value);
  const structured = typeof value === 'object' && !Array.isArray(value);
  return { content: [text(json)], structuredContent: structured ? json : undefined, isError: false };
}

function message(error) {
  // Errors of WIT imports (`ComponentError`) carry the message too, but are not `instanceof Error`.
  if (error && typeof error.message === 'string' && error.message) return error.message;
  return error instanceof Error ? error.name : String(error);
}

function templatePattern(template) {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const parts = template.split(/\{\w+\}/);
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let source = '^';
  names.forEach((name, i) => {
    source += escape(parts[i]) + (i === names.length - 1 ? `(?<${name}>.+)` : `(?<${name}>[^/]+)`);
  });
  return new RegExp(`${source}${escape(parts[parts.length - 1])}$`);
}

/** The MIME type of an MCP App's HTML. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** Sets the `_meta` of this call's result (WIT 0.1.3): a JSON object; keys under a prefix MCP
 * reserves are refused, and it counts against the call's output limit. Throws the host's reason. */
export function resultMeta(meta) {
  host.resultMeta(JSON.stringify(meta));
}

/** Sets the `_meta` of the contents at `uri` this read returns (WIT 0.1.3), e.g. an MCP App's
 * `{ ui: { csp: {...} } }`, which must stay within the plugin's grants. */
export function contentsMeta(uri, meta) {
  host.contentsMeta(uri, JSON.stringify(meta));
}

/** The tools this call may call with `callTool` (WIT 0.1.4): those the operator lists in
 * `[plugin.NAME] may_call` that the caller may use and a model may call, as
 * `{ name, description, inputSchema, outputSchema }`. */
export function callableTools() {
  return host.callableTools().map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: JSON.parse(tool.inputSchema),
    outputSchema: tool.outputSchema === undefined ? undefined : JSON.parse(tool.outputSchema),
  }));
}

/** Calls another served tool through the host (WIT 0.1.4), as the client would call it for the
 * same principal, and returns its MCP `CallToolResult` (a tool that failed returns
 * `{ isError: true, ... }`). Throws the host's refusal: a tool not in `[plugin.NAME] may_call`,
 * not the caller's to use, unknown, a cycle, too many calls. The callee runs with its own
 * grants, never this plugin's. */
export function callTool(name, args = {}) {
  return JSON.parse(host.callTool(name, JSON.stringify(args)));
}

/** Everything a plugin offers. Register with the methods, then export with
 * `export const { tools, resources, prompts, completion } = plugin.exports();` (and `metadata`
 * too, built with `worldName: 'described-plugin'`, for `_meta`, icons, apps, instructions and
 * skills). */
export class Plugin {
  #tools = new Map();
  #resources = new Map();
  #templates = [];
  #prompts = new Map();
  #completer = null;
  #items = [];
  #instructions = undefined;
  #skillFiles = [];

  /** Gives an item `_meta` (an object) and icons (`{ src, mimeType, sizes, theme }`; `src` a
   * `data:` URI or an https URL the network grant allows). `kind`: 'tool', 'prompt', 'resource'
   * (by URI) or 'resource-template' (by URI template). Given twice, `_meta` merges. */
  metadata(kind, name, meta, icons = []) {
    const item = this.#items.find((i) => i.subject.tag === kind && i.subject.val === name);
    const wireIcons = icons.map((icon) => ({
      src: icon.src,
      mimeType: icon.mimeType,
      sizes: icon.sizes ?? [],
      theme: icon.theme,
    }));
    if (item) {
      item.meta = { ...item.meta, ...meta };
      item.icons.push(...wireIcons);
    } else {
      this.#items.push({ subject: { tag: kind, val: name }, meta: meta ? { ...meta } : undefined, icons: wireIcons });
    }
    return this;
  }

  /** Ships an MCP App for tool `tool`: the HTML at `uri` (`ui://...`), served as
   * text/html;profile=mcp-app with the resource `_meta.ui` given (`csp`, `permissions`,
   * `prefersBorder`; checked against the plugin's grants). */
  app(tool, uri, html, ui = {}) {
    this.resource(
      uri,
      tool,
      () => {
        contentsMeta(uri, { ui });
        return html;
      },
      { mimeType: APP_MIME_TYPE },
    );
    return this.metadata('tool', tool, { ui: { resourceUri: uri } });
  }

  /** What this plugin adds to the server's instructions. */
  instructions(text) {
    this.#instructions = text;
    return this;
  }

  /** Ships a skill file: `path` is `<skill>/<path in the skill>` (e.g. `charts/SKILL.md`),
   * served at `skill://<plugin>/<path>`; `contents` a string or a `Uint8Array`. */
  skillFile(path, contents) {
    const bytes = typeof contents === 'string' ? new TextEncoder().encode(contents) : contents;
    this.#skillFiles.push({ path, contents: bytes });
    return this;
  }

  /** Adds a tool. `options`: `title`, `outputSchema` (of the structured content it returns),
   * `readOnly`. */
  tool(name, description, inputSchema, run, options = {}) {
    const annotations = options.readOnly
      ? { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
      : undefined;
    const descriptor = {
      name,
      title: options.title,
      description,
      inputSchema: JSON.stringify(inputSchema),
      outputSchema: options.outputSchema ? JSON.stringify(options.outputSchema) : undefined,
      annotations,
    };
    this.#tools.set(name, { descriptor, inputSchema, run });
    return this;
  }

  /** Adds a resource at `uri`, or, when `uri` holds `{variables}`, a resource template whose
   * variables reach `read` as an object. `read` returns a string or a `Uint8Array`.
   * `options`: `description`, `mimeType` (default text/plain). */
  resource(uri, name, read, options = {}) {
    const mimeType = options.mimeType ?? 'text/plain';
    if (uri.includes('{')) {
      const descriptor = { uriTemplate: uri, name, description: options.description, mimeType };
      this.#templates.push({ descriptor, pattern: templatePattern(uri), read });
    } else {
      const descriptor = { uri, name, description: options.description, mimeType };
      this.#resources.set(uri, { descriptor, read });
    }
    return this;
  }

  /** Adds a prompt. `args` maps argument names to `{ description, required }`; `get` receives
   * them as an object and returns the text of one user message, a content block, or a list of
   * `[role, text]` pairs. */
  prompt(name, description, args, get) {
    const argumentList = Object.entries(args).map(([argName, spec]) => ({
      name: argName,
      description: spec.description,
      required: spec.required !== false,
    }));
    this.#prompts.set(name, { descriptor: { name, description, arguments: argumentList }, get });
    return this;
  }

  /** Sets the function `(referenceName, argumentName, typedSoFar) => string[]` that completes
   * prompt and resource-template arguments. */
  completion(complete) {
    this.#completer = complete;
    return this;
  }

  /** The interface objects componentize-js looks for among the module's exports. */
  exports() {
    this.#warmDispatch();
    return {
      tools: {
        listTools: () => [...this.#tools.values()].map((t) => t.descriptor),
        callTool: (name, args) => this.#callTool(name, args),
      },
      resources: {
        listResources: () => [...this.#resources.values()].map((r) => r.descriptor),
        listResourceTemplates: () => this.#templates.map((t) => t.descriptor),
        readResource: (uri) => this.#readResource(uri),
      },
      prompts: {
        listPrompts: () => [...this.#prompts.values()].map((p) => p.descriptor),
        getPrompt: (name, args) => this.#getPrompt(name, Object.fromEntries(args)),
      },
      completion: {
        complete: (request) => {
          const values = this.#completer
            ? [...this.#completer(request.reference.val, request.argumentName, request.argumentValue)]
            : [];
          return { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 };
        },
      },
      metadata: {
        describeItems: () =>
          this.#items.map((item) => ({
            subject: item.subject,
            meta: item.meta ? JSON.stringify(item.meta) : undefined,
            icons: item.icons,
          })),
        instructions: () => this.#instructions,
        skills: () => this.#skillFiles,
      },
    };
  }

  /** Runs the SDK's own dispatch (arguments parsed and checked, results and errors built) on
   * a tool of its own, never a plugin's, a few times before the snapshot: the engine's inline
   * caches and shapes are then made once, in the snapshot, not again in every call's fresh
   * instance. */
  #warmDispatch() {
    const inputSchema = {
      type: 'object',
      properties: { name: { type: 'string' }, count: { type: 'integer' } },
      required: ['name'],
    };
    this.#tools.set('\0warm', { descriptor: null, inputSchema, run: (a) => ({ name: a.name, count: a.count }) });
    try {
      for (let i = 0; i < 16; i++) {
        this.#callTool('\0warm', '{"name": "warm", "count": 1}');
        for (const bad of ['{"nope": 1}', '[]', '{"name": 1}', '{']) {
          try {
            this.#callTool('\0warm', bad);
          } catch {
            // Refused, as arguments like these are.
          }
        }
        callResult('text');
        callResult(undefined);
      }
    } finally {
      this.#tools.delete('\0warm');
    }
  }

  #callTool(name, argumentsJson) {
    const tool = this.#tools.get(name);
    if (!tool) throw { tag: 'unknown-tool', val: `no tool named \`${name}\`` };
    let args;
    try {
      args = argumentsJson.trim() ? JSON.parse(argumentsJson) : {};
    } catch (error) {
      throw { tag: 'invalid-arguments', val: `arguments are not JSON: ${message(error)}` };
    }
    const problem = check(tool.inputSchema, args);
    if (problem) throw { tag: 'invalid-arguments', val: problem };
    try {
      return callResult(tool.run(args));
    } catch (error) {
      if (error instanceof InvalidArguments) throw { tag: 'invalid-arguments', val: error.message };
      throw { tag: 'failed', val: message(error) };
    }
  }

  #readResource(uri) {
    let entry = this.#resources.get(uri);
    let vars = {};
    if (!entry) {
      for (const template of this.#templates) {
        const match = template.pattern.exec(uri);
        if (match) {
          entry = template;
          vars = { ...match.groups };
          break;
        }
      }
    }
    if (!entry) throw { tag: 'not-found', val: `no resource at ${uri}` };
    try {
      return [contents(uri, entry.descriptor.mimeType, entry.read(vars))];
    } catch (error) {
      throw { tag: error instanceof NotFound ? 'not-found' : 'failed', val: message(error) };
    }
  }

  #getPrompt(name, args) {
    const prompt = this.#prompts.get(name);
    if (!prompt) throw { tag: 'unknown-prompt', val: `no prompt named \`${name}\`` };
    const missing = prompt.descriptor.arguments.find((a) => a.required && !(a.name in args));
    if (missing) throw { tag: 'invalid-arguments', val: `missing required argument \`${missing.name}\`` };
    let value;
    try {
      value = prompt.get(args);
    } catch (error) {
      throw { tag: error instanceof InvalidArguments ? 'invalid-arguments' : 'failed', val: message(error) };
    }
    if (value && Array.isArray(value.messages)) return value;
    const messages = Array.isArray(value)
      ? value.map(([role, content]) => ({ role, content: isContent(content) ? content : text(content) }))
      : [{ role: 'user', content: isContent(value) ? value : text(value) }];
    return { messages };
  }
}
