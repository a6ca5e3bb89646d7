/**
 * The only code that writes to stdout and stderr for people (lint forbids process.stdout.write,
 * process.stderr.write and console.* elsewhere in cli/ and lib/): Text goes through
 * terminalString, JSON through escapeJsonForTerminal. What a model, a tool, a server or a file
 * wrote is therefore escaped whatever path it took to get here, on a terminal or a pipe.
 */
import { escapeJsonForTerminal } from './escape';
import { terminalString, type Text } from './text';

/** Text on stdout, as it is (no line end added). */
export function writeOut(text: Text): void {
  process.stdout.write(terminalString(text));
}

/** Text on stderr, as it is (no line end added): prompts, a progress line redrawn in place. */
export function writeErr(text: Text): void {
  process.stderr.write(terminalString(text));
}

/** A line on stderr (a note, a log line). */
export function writeErrLine(line: Text): void {
  writeErr([line, '\n']);
}

/** A value as one indented JSON document on stdout, with a line end. */
export function writeJson(value: unknown): void {
  process.stdout.write(`${jsonText(value, 2)}\n`);
}

/** Values as JSON on stdout, one line each (a stream of spans), in one write. */
export function writeJsonLines(values: readonly unknown[]): void {
  process.stdout.write(values.map((v) => `${jsonText(v, 0)}\n`).join(''));
}

function jsonText(value: unknown, indent: number): string {
  return escapeJsonForTerminal(JSON.stringify(value, null, indent) ?? 'null');
}
