#!/usr/bin/env node
// Entry point of the `harness` command: runs the compiled CLI (npm run build / npm run setup),
// a client command from its bundle (dist/cli/client-commands.js says which).
const path = require('node:path');
// A reader that went away (`harness sessions | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err && err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}
let cli;
try {
  const root = path.join(__dirname, '..');
  const { cliModule } = require(path.join(root, 'dist', 'cli', 'client-commands.js'));
  const main = cliModule(process.argv.slice(2), root);
  // A client command's start is much of it V8 compiling its bundle: reuse the code of the last start.
  if (path.basename(path.dirname(main)) === 'bundle') require(path.join(root, 'dist', 'cli', 'code-cache.js')).useCodeCache(path.dirname(main));
  cli = require(main);
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('error: the harness is not built yet\nhint: run `npm run setup` (or `npm run build`) first\n');
    process.exit(1);
  }
  throw err;
}
// An error thrown outside main's promise (a library callback) is printed like any bug, escaped,
// rather than by Node's own printer, which writes its message raw.
const crash = (err) => {
  cli.reportBug(err);
  process.exit(1);
};
process.on('uncaughtException', crash);
// Clients keep gRPC channels open: exit once the command is done, but only after what it wrote
// has left: writes to a pipe are asynchronous, and exiting at once cut a large --json at 64 KiB.
const exitWhenFlushed = () => {
  const code = process.exitCode ?? 0;
  let open = 2;
  const flushed = () => --open === 0 && process.exit(code);
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.destroyed || stream.writableEnded) flushed();
    else stream.write('', flushed);
  }
};
cli.main().then(exitWhenFlushed, crash);
