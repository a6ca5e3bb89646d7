// A small stateful MCP server (stdio, built on the official SDK): a key/value map held in memory,
// so a test can tell whether two sessions talk to one process (they see each other's keys) or to
// two (they do not). `whoami` answers the process id.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const values = new Map();
const server = new McpServer({ name: 'kv', version: '1.0.0' });
const text = (t) => ({ content: [{ type: 'text', text: t }] });
server.registerTool('put', { description: 'Remembers a value under a key.', inputSchema: { key: z.string(), value: z.string() } }, async ({ key, value }) => {
  values.set(key, value);
  return text(`stored ${key}`);
});
server.registerTool('get', { description: 'The value remembered under a key.', inputSchema: { key: z.string() } }, async ({ key }) =>
  text(values.has(key) ? `${key}=${values.get(key)}` : `${key} is not set`),
);
server.registerTool('whoami', { description: 'The server process id.', inputSchema: {} }, async () => text(`pid ${process.pid}`));
server.connect(new StdioServerTransport());
