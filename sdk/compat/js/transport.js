// Stands where the SDK's stdio transport was (`@modelcontextprotocol/sdk/server/stdio.js` is
// resolved here by the bundler): the server's own code says `new StdioServerTransport()` and
// `server.connect(transport)` as it always does, and its messages go to the bridge's session
// (session.js) instead of stdin and stdout. The class keeps the SDK's name and takes whatever
// the server passes its constructor.
import { attach, deliver } from './session.js';

export class StdioServerTransport {
  constructor() {
    this.onmessage = undefined;
    this.onclose = undefined;
    this.onerror = undefined;
  }

  async start() {
    attach(this);
  }

  async send(message) {
    deliver(message);
  }

  async close() {
    this.onclose?.();
  }
}
