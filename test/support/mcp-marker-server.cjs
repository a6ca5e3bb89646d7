// A "server" a planted session's config names: it only records that it was started (its pid, one
// line appended to the file named by its first argument) and never answers, so whoever lists its
// tools waits until the startup timeout. It exits when its stdin closes (its worker is gone).
const { appendFileSync } = require('node:fs');

appendFileSync(process.argv[2], `${process.pid}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
