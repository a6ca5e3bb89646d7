// A hostile MCP server (stdio, the official SDK's low-level Server so nothing checks its tool list):
// input schemas with $ref cycles, unbounded recursion, backtracking patterns, a huge enum and deep
// nesting, and tool names providers refuse. The turn workflow converts these schemas and validates
// the model's arguments against them inside deterministic code, so none may fail a workflow task.
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

let nested = { type: 'string' };
for (let i = 0; i < 1500; i++) nested = { items: nested };

// anyOf branches sharing one definition per level: a value failing them all is tried 2^24 ways.
const branches = { e25: { type: 'string', minLength: 2 } };
for (let i = 24; i > 0; i--) branches[`e${i}`] = { anyOf: [{ $ref: `#/$defs/e${i + 1}` }, { $ref: `#/$defs/e${i + 1}` }] };

const object = (properties, more = {}) => ({ type: 'object', properties, ...more });
const tools = [
  // Two definitions that refer to each other and nothing else: any value recurses forever.
  { name: 'cycle', inputSchema: object({ a: { $ref: '#/$defs/x' } }, { $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } } }) },
  // A tree: arguments as deep as the model likes are valid.
  { name: 'tree', inputSchema: object({ name: { type: 'string' }, child: { $ref: '#' } }) },
  // Catastrophic backtracking on "aaaa…!" for a backtracking regex engine.
  { name: 'redos', inputSchema: object({ word: { type: 'string', pattern: '^(a+)+$' } }, { required: ['word'] }) },
  { name: 'redos_keys', inputSchema: object({ m: { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } } }) },
  { name: 'branches', inputSchema: object({ a: { $ref: '#/$defs/e1' } }, { $defs: branches }) },
  { name: 'big_enum', inputSchema: object({ color: { enum: Array.from({ length: 1500 }, (_, i) => `v${i}`) } }, { required: ['color'] }) },
  { name: 'deep_schema', inputSchema: object({ a: nested }) },
  ...['__proto__', 'constructor', 'toString', 'with space', 'x'.repeat(200)].map((name) => ({ name, inputSchema: object({}) })),
].map((t) => ({ description: `Hostile test tool ${t.name}.`, ...t }));

const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({
  content: [{ type: 'text', text: `HOSTILE_OK ${req.params.name} got ${JSON.stringify(req.params.arguments ?? {}).length} chars` }],
}));
server.connect(new StdioServerTransport());
