// What a script sees besides the language: `tools` and `callTool` (each call goes through the
// host, checked as the client's own), and `console` (what it logs is part of the result).
// Nothing else: no filesystem, no network, no environment.
(() => {
  const call = globalThis.__mcpbox_call;
  const log = globalThis.__mcpbox_log;
  delete globalThis.__mcpbox_call;
  delete globalThis.__mcpbox_log;
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
  const tool = (plugin) =>
    new Proxy({}, { get: (_, name) => (typeof name === 'string' ? (args) => callTool(`${plugin}.${name}`, args) : undefined) });
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
    value: new Proxy({}, { get: (_, plugin) => (typeof plugin === 'string' ? tool(plugin) : undefined) }),
  });
  Object.defineProperty(globalThis, 'console', {
    value: Object.freeze({ log: write, info: write, warn: write, error: write, debug: write }),
  });
})();
