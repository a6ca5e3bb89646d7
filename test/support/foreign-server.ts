/**
 * A loopback HTTP server in a process that is not a descendant of the test process. A test
 * that runs http_request in-process plays the worker, and every port the worker or a process
 * it started listens on is the worker's own (activities/tools/own-ports.ts). A server the user
 * runs elsewhere (their app on 127.0.0.1:3000) is foreign: this stands for it. It is started
 * through a shell that backgrounds it and exits, so it is reparented away from the test; it
 * exits by itself once the test process is gone.
 */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { readFileSync } from 'node:fs';

/** A running foreign server. */
export interface ForeignServer {
  port: number;
  pid: number;
  /** Requests it answered (other than this count itself) since the last call. */
  takeHits(): Promise<number>;
  stop(): Promise<void>;
}

// Answers `body` to everything; GET /__hits returns and resets the request count.
const SERVER = `
const http = require('node:http');
const [parent, body] = [Number(process.argv[1]), process.argv[2]];
let hits = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/__hits') { res.end(String(hits)); hits = 0; return; }
  hits++;
  res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port, pid: process.pid }) + '\\n'));
setInterval(() => { try { process.kill(parent, 0); } catch { process.exit(0); } }, 500);
`;

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
}

/** Starts a foreign server answering `body`; resolves once it listens. */
export async function startForeignServer(body = 'foreign'): Promise<ForeignServer> {
  const shell = spawn('sh', ['-c', `"${process.execPath}" -e "$1" "$2" "$3" &`, 'sh', SERVER, String(process.pid), body], { stdio: ['ignore', 'pipe', 'inherit'] });
  const shellGone = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    shell.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    shell.stdout!.once('end', () => reject(new Error(`the foreign server did not start: ${out}`)));
  });
  await shellGone;
  shell.stdout!.destroy();
  const { port, pid } = JSON.parse(line) as { port: number; pid: number };
  if (parentOf(pid) === process.pid) throw new Error(`the foreign server (pid ${pid}) is still a child of the test process`);
  return {
    port,
    pid,
    takeHits: async () => Number(await get(port, '/__hits')),
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}
