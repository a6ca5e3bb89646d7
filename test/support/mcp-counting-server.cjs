// A small MCP server (stdio, built on the official SDK) whose one tool has an effect the test can
// count: each call of `send` appends a line to the file named by its first argument, so a test
// knows how many times the harness really called the server (listing its tools is not counted).
const { appendFileSync } = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const calls = process.argv[2];
const server = new McpServer({ name: 'counting', version: '1.0.0' });
server.registerTool('send', { description: 'Sends a message to the outside world (counted).', inputSchema: { text: z.string() } }, async ({ text }) => {
  appendFileSync(calls, `${text}\n`);
  return { content: [{ type: 'text', text: `sent: ${text}` }] };
});
server.connect(new StdioServerTransport());
