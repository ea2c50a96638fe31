// What a script sees besides the language: `tools` and `callTool` (each call goes through the
// host, checked as the client's own), and `console` (what it logs is part of the result).
// Nothing else: no filesystem, no network, no environment.
(() => {
  const call = globalThis.__mcpbox_call;
  const log = globalThis.__mcpbox_log;
  const split = globalThis.__mcpbox_split;
  const regexSplit = globalThis.__mcpbox_regex_split;
  const matchAll = globalThis.__mcpbox_match_all;
  for (const name of ['__mcpbox_call', '__mcpbox_log', '__mcpbox_split', '__mcpbox_regex_split', '__mcpbox_match_all']) {
    delete globalThis[name];
  }
  // The engine's own `split` and global `match` take quadratic time on long strings: the common
  // cases run natively (with the engine's own regular expressions), the rest as before.
  const engineSplit = String.prototype.split;
  const engineMatch = String.prototype.match;
  const plainRegExp = (value) => value instanceof RegExp && !Object.prototype.hasOwnProperty.call(value, Symbol.split);
  Object.defineProperty(String.prototype, 'split', {
    value: function (separator, limit) {
      if (typeof separator === 'string') return split(String(this), separator, limit);
      if (plainRegExp(separator)) return regexSplit(String(this), separator.source, separator.flags, limit);
      return engineSplit.call(this, separator, limit);
    },
    writable: true,
    configurable: true,
  });
  Object.defineProperty(String.prototype, 'match', {
    value: function (regexp) {
      if (plainRegExp(regexp) && regexp.global) {
        regexp.lastIndex = 0;
        return matchAll(String(this), regexp.source, regexp.flags);
      }
      return engineMatch.call(this, regexp);
    },
    writable: true,
    configurable: true,
  });
  const textOf = (result) =>
    (result.content ?? []).filter((block) => block.type === 'text').map((block) => block.text).join('\n');
  const callTool = async (name, args = {}) => {
    const result = JSON.parse(call(String(name), JSON.stringify(args ?? {})));
    if (result.isError) {
      const error = new Error(textOf(result) || `${name} failed`);
      error.result = result;
      throw error;
    }
    if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
    const blocks = result.content ?? [];
    if (blocks.every((block) => block.type === 'text')) return textOf(result);
    return result;
  };
  // `then` is never a tool: an awaited `tools.x` is the object itself, not a call.
  const named = (name) => typeof name === 'string' && name !== 'then';
  const tool = (plugin) =>
    new Proxy({}, { get: (_, name) => (named(name) ? (args) => callTool(`${plugin}.${name}`, args) : undefined) });
  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const write = (...values) => log(values.map(show).join(' '));
  Object.defineProperty(globalThis, 'callTool', { value: callTool });
  Object.defineProperty(globalThis, 'tools', {
    value: new Proxy({}, { get: (_, plugin) => (named(plugin) ? tool(plugin) : undefined) }),
  });
  Object.defineProperty(globalThis, 'console', {
    value: Object.freeze({ log: write, info: write, warn: write, error: write, debug: write }),
  });
})();
