/**
 * Writes test/durations.json, how long each test file took, from a vitest JSON report
 * (`npx vitest run --reporter=json --outputFile=report.json`): the order a clean checkout starts
 * its test files in (test/support/longest-first.mts). Run after tests were added or changed
 * much: `npm run test:durations -- report.json [the folder the run was in]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../machine/paths';

interface Report {
  testResults: { name: string; status: string; startTime: number; endTime: number }[];
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: npm run test:durations -- <vitest JSON report> [the folder the run was in]\n');
  process.exit(2);
}
const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
// The report names files by absolute path: relative to the folder the run was in (default: here).
const runRoot = path.resolve(process.argv[3] ?? process.cwd());
const root = projectRoot();
const seconds: Record<string, number> = {};
// A file that failed may have stopped early: its time says nothing of its length, so it is left
// out (and, unknown, goes first).
for (const r of [...report.testResults].filter((t) => t.status === 'passed').sort((a, b) => a.name.localeCompare(b.name))) {
  seconds[path.relative(runRoot, r.name)] = Math.round((r.endTime - r.startTime) / 100) / 10;
}
const out = path.join(root, 'test', 'durations.json');
writeFileSync(out, `${JSON.stringify({ note: 'seconds per test file, from one run of the whole suite; see test/support/longest-first.mts', seconds }, null, 1)}\n`);
process.stdout.write(`${Object.keys(seconds).length} files → ${path.relative(process.cwd(), out)}\n`);
