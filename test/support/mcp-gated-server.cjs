// An MCP server (stdio, the official SDK's low-level Server) with one tool whose listing a test can
// hold: while the file named by the first argument exists, a tools/list writes the file named by
// the second (so the test knows a listing waits) and answers only once the first is gone.
const { existsSync, writeFileSync } = require('node:fs');
const { setTimeout: sleep } = require('node:timers/promises');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const [shut, waiting] = process.argv.slice(2);
const server = new Server({ name: 'gated', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  if (existsSync(shut)) {
    writeFileSync(waiting, String(process.pid));
    while (existsSync(shut)) await sleep(100);
  }
  return { tools: [{ name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object', properties: {} } }] };
});
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
server.connect(new StdioServerTransport());
