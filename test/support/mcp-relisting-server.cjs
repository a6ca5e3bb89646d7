// A hostile MCP server (stdio, the official SDK's low-level Server): a large tool list (100 tools
// with schemas of about 15 KB, 1.5 MB in all by default) that it says has changed after every call
// (notifications/tools/list_changed before the call's result). Each call makes a new version of
// the list (every description names it) unless RELIST_SAME=1, when the list never changes and
// only the notices come. Calls answer with the list version they saw.
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const COUNT = Number(process.env.RELIST_TOOLS || 100);
const SCHEMA_BYTES = Number(process.env.RELIST_SCHEMA_BYTES || 15_000);
const SAME = process.env.RELIST_SAME === '1';
let version = 1;

const list = () =>
  Array.from({ length: COUNT }, (_, i) => ({
    name: `t${i}`,
    description: `Tool t${i}, list version ${version}.`,
    inputSchema: { type: 'object', properties: { i: { type: 'number', description: `v${version} ${'p'.repeat(SCHEMA_BYTES)}` } } },
  }));

const server = new Server({ name: 'relisting', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: list() }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const seen = version;
  if (!SAME) version++;
  await server.sendToolListChanged();
  return { content: [{ type: 'text', text: `RELIST_OK ${req.params.name} at version ${seen}` }] };
});
server.connect(new StdioServerTransport());
