/**
 * Where `run` takes its task from: the argument, a file (`--file F`) or standard input (`-`).
 * A long task cannot be an argument (the OS caps a command line near 128 KiB), so files and
 * stdin take it; all three are checked like the session checks a message, before anything starts.
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '../machine/errors';
import { checkMessage } from '../client/session-client';
import { MAX_MESSAGE_BYTES } from '../deterministic/messages';

const ONE_SOURCE = 'give the task as one argument, or `--file <path>`, or `-` to read it from standard input';

/** The task text from exactly one of: the argument, `--file`, or `-` (stdin); usage errors otherwise. */
export async function readTask(arg: string | undefined, file: string | undefined, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (arg !== undefined && file !== undefined) throw new UsageError('both a task argument and --file were given', ONE_SOURCE);
  if (arg === undefined && file === undefined) throw new UsageError('missing the task', ONE_SOURCE);
  let text: string;
  if (file !== undefined) text = readTaskFile(file);
  else if (arg === '-') text = await readStdin(stdin);
  else text = arg!;
  checkMessage(text, file !== undefined ? `the task in ${file}` : arg === '-' ? 'the task on standard input' : 'the task');
  return text;
}

/**
 * A text file of at most MAX_MESSAGE_BYTES; `what` names it in the error. A large file is refused
 * without reading it: its UTF-8 text is at least as long as its bytes. Read errors are thrown as is.
 */
export function readBoundedText(file: string, what: string): string {
  const size = statSync(file).size;
  if (size > MAX_MESSAGE_BYTES) tooLarge(what, size);
  return readFileSync(file, 'utf8');
}

function readTaskFile(file: string): string {
  try {
    return readBoundedText(file, `the task in ${file}`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read --file ${file}: ${(err as Error).message.split('\n')[0]}`, 'check the path (relative paths start at the working directory)');
  }
}

/** Reads stdin to its end, stopping early once it is surely over the limit. */
async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(buf);
    size += buf.length;
    if (size > MAX_MESSAGE_BYTES) tooLarge('the task on standard input'); // no need to read the rest
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(what: string, size?: number): never {
  const how = size === undefined ? `over ${MAX_MESSAGE_BYTES / 1024} KiB` : `${size} bytes`;
  throw new UsageError(`${what} is ${how}; at most ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text is accepted`, 'shorten it; put large material in files the agent can read (the session workspace) and refer to them');
}
