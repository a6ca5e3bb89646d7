// A small MCP server (stdio, built on the official SDK) whose tool list grows: calling `unlock`
// registers the tool `secret`, and the SDK tells the client with notifications/tools/list_changed.
// No published server changes its list on demand; this one exists to test re-discovery.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'growing', version: '1.0.0' });
server.registerTool('unlock', { description: 'Adds the tool `secret` to this server.', inputSchema: {} }, async () => {
  if (!unlocked) {
    unlocked = true;
    server.registerTool('secret', { description: 'Returns the secret word.', inputSchema: { who: z.string() } }, async ({ who }) => ({
      content: [{ type: 'text', text: `the secret for ${who} is PINEAPPLE` }],
    }));
  }
  return { content: [{ type: 'text', text: 'unlocked' }] };
});
let unlocked = false;
server.connect(new StdioServerTransport());
