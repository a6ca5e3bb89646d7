// Lint: TypeScript rules everywhere, plus determinism rules for workflow code (workflows/ and
// the pure deterministic/ folder it imports): no Node built-ins, no I/O clients, no clocks or
// randomness, only type imports from activities, and no floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = [
  'assert', 'async_hooks', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs',
  'fs/promises', 'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline',
  'stream', 'timers', 'timers/promises', 'tls', 'tty', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
];

/** The project's own top-level folders of Node-side code. */
const NODE_ROOMS = ['activities', 'api', 'cli', 'client', 'config', 'console', 'evals', 'history', 'machine', 'scripted-model', 'scripts', 'workers', 'workflows'];

/** One lint block per layer: imports of code from the rooms above it are errors (type imports pass). */
function layers(above) {
  return Object.entries(above).map(([room, banned]) => ({
    files: [`${room}/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Relative imports only: `@temporalio/client` is a package, `../client/x` a room.
              regex: `^(\\.\\.?/)+(${banned.join('|')})(/|$)`,
              allowTypeImports: true,
              message: `${room}/ is below this layer: move what both need down (deterministic/, machine/), or pass it in.`,
            },
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.venv/**', '.harness/**', 'coverage/**', 'bench/peers/*/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The console's page (console/assets): plain browser JavaScript, shipped as written.
    files: ['console/assets/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(['document', 'window', 'location', 'fetch', 'EventSource', 'Node', 'setTimeout', 'setInterval', 'clearTimeout'].map((g) => [g, 'readonly'])),
    },
  },
  {
    // bench/peers and bench/floor: workflows and turns outside the harness, plain CommonJS run as written.
    files: ['bin/**/*.js', 'test/**/*.cjs', 'bench/peers/**/*.js', 'bench/floor/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: Object.fromEntries(['require', 'process', '__dirname', 'module', 'console', 'fetch', 'performance', 'setTimeout'].map((g) => [g, 'readonly'])),
    },
  },
  {
    // Terminal safety: what people read goes through the escaping writers (cli/output.ts on
    // machine/terminal/write.ts), so text from a model, a tool, a server or a file cannot reach the
    // terminal as escape sequences. Only machine/terminal/write.ts touches the streams itself.
    files: ['cli/**/*.ts', 'client/**/*.ts', 'config/**/*.ts', 'history/**/*.ts', 'machine/**/*.ts', 'evals/**/*.ts', 'workers/**/*.ts', 'console/**/*.ts'],
    ignores: ['machine/terminal/write.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.type='MemberExpression'][object.object.name='process'][object.property.name=/^(stdout|stderr)$/][property.name=/^(write|end)$/]",
          message: 'Print with say/print/printJson (cli/output.ts) or machine/terminal/write.ts: they escape what models, tools and files wrote.',
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'console', message: 'Print with say/print/printJson (cli/output.ts) or machine/terminal/write.ts: they escape what models, tools and files wrote.' },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts', 'deterministic/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...NODE_BUILTINS.map((name) => ({ name, message: 'Workflow code is deterministic: no Node built-ins.' })),
            ...['@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'openai', 'pg', 'dockerode'].map((name) => ({
              name,
              message: 'Workflow code must not do I/O; call an activity instead.',
            })),
          ],
          patterns: [
            { group: ['node:*'], message: 'Workflow code is deterministic: no Node built-ins.' },
            { group: ['**/activities', '**/activities/**'], allowTypeImports: true, message: 'Only `import type` from activities.' },
            { regex: `^(\\.\\.?/)+(${NODE_ROOMS.filter((r) => r !== 'workflows' && r !== 'activities').join('|')})(/|$)`, allowTypeImports: true, message: 'Node-side code; not for workflows.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'fetch', 'process', 'require', 'Buffer', 'crypto', 'performance'].map((name) => ({
          name,
          message: 'Not deterministic in workflow code: use @temporalio/workflow (sleep, condition, uuid4) or an activity.',
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Randomness belongs in an activity (or uuid4 from @temporalio/workflow).' },
        { object: 'Date', property: 'now', message: 'Clocks belong in an activity; history timestamps time the steps.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date']", message: 'Clocks belong in an activity.' },
        { selector: "CallExpression[callee.name='Date']", message: 'Clocks belong in an activity.' },
      ],
    },
  },

  // The layers, top to bottom: cli, console, api; evals/runner; client, workers; config; history;
  // activities; machine; workflows; deterministic. Nothing below reaches up (type imports aside, which leave
  // no code behind): activities never load client-side or workflow code, readers of history never
  // load the client, and machine/ holds only what every process on the machine shares.
  ...layers({
    activities: ['client', 'cli', 'api', 'console', 'config', 'workers', 'workflows', 'evals', 'scripts'],
    history: ['client', 'cli', 'api', 'console', 'config', 'workers', 'workflows', 'evals', 'scripts', 'activities', 'scripted-model'],
    machine: ['client', 'cli', 'api', 'console', 'config', 'workers', 'workflows', 'evals', 'scripts', 'activities', 'history', 'scripted-model'],
    config: ['client', 'cli', 'api', 'console', 'workers', 'workflows', 'evals', 'scripts', 'history', 'activities'],
    client: ['cli', 'api', 'console', 'evals', 'scripts'],
    workers: ['cli', 'api', 'console', 'evals', 'scripts'],
    'evals/runner': ['cli', 'api', 'console', 'scripts'],
  }),
);
