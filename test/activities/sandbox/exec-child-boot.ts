import * as path from 'node:path';

// A stand-in worker runs TypeScript straight from the sources (no build needed).
export const CHILD_BOOT = `
const ts = require('typescript');
const fs = require('fs');
require.extensions['.ts'] = (m, file) => m._compile(ts.transpileModule(fs.readFileSync(file, 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
}).outputText, file);
require(${JSON.stringify(path.join(__dirname, 'exec-child.ts'))});
`;
