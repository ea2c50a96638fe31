// Build-time warm-up of the SDK's message schemas (build.mjs): each parses the messages of one
// call once, in the snapshot, so that what zod prepares on a schema's first parse (its compiled
// fast path) is there already when a call's fresh instance starts. Pure: sample messages of
// the bridge's own, nothing of the machine; a schema an SDK version lacks is skipped.
const SAMPLES = [
  ['JSONRPCMessageSchema', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tool', arguments: {} } }],
  ['JSONRPCRequestSchema', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }],
  ['JSONRPCResponseSchema', { jsonrpc: '2.0', id: 1, result: {} }],
  ['InitializeRequestSchema', {
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcpbox', version: '0.1' } },
  }],
  ['InitializedNotificationSchema', { method: 'notifications/initialized', params: {} }],
  ['CallToolRequestSchema', { method: 'tools/call', params: { name: 'tool', arguments: { a: 1 }, _meta: { progressToken: 'mcpbox' } } }],
  ['CallToolResultSchema', { content: [{ type: 'text', text: 'result' }], isError: false }],
  ['ListToolsRequestSchema', { method: 'tools/list', params: {} }],
  ['ListResourcesRequestSchema', { method: 'resources/list', params: {} }],
  ['ReadResourceRequestSchema', { method: 'resources/read', params: { uri: 'x://y' } }],
  ['ListPromptsRequestSchema', { method: 'prompts/list', params: {} }],
  ['GetPromptRequestSchema', { method: 'prompts/get', params: { name: 'p', arguments: {} } }],
];

export function warm(types) {
  for (const [name, sample] of SAMPLES) {
    try {
      types[name]?.safeParse?.(sample);
    } catch {
      // A schema of another shape in this SDK version: nothing to warm.
    }
  }
}
