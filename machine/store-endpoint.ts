/**
 * Where the process holding the embedded database serves it: PGlite opens in one process only,
 * and that process (the worker, `harness dev`) already serves it over the Postgres wire protocol
 * on 127.0.0.1. It notes the port beside the data folder (`<HARNESS_HOME>/pgdata.endpoint`, mode
 * 0600), so `trace --full`, the console and the OTLP export read the message store through it
 * instead of being refused by the folder's lock.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/** What the endpoint file says. */
interface StoreEndpoint {
  pid: number;
  port: number;
}

/** The endpoint file of a data folder. */
function endpointFile(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}.endpoint`;
}

/** Notes where this process serves the folder's database; returns a function that removes the note. */
export function writeStoreEndpoint(dataDir: string, port: number): () => void {
  const file = endpointFile(dataDir);
  writeFileSync(file, JSON.stringify({ pid: process.pid, port }), { mode: 0o600 });
  return () => {
    // Only our own note: a later holder may have written its own.
    if (readStoreEndpoint(dataDir)?.pid === process.pid) rmSync(file, { force: true });
  };
}

/** The noted endpoint, or undefined when there is none or it cannot be read. */
export function readStoreEndpoint(dataDir: string): StoreEndpoint | undefined {
  try {
    const e = JSON.parse(readFileSync(endpointFile(dataDir), 'utf8')) as Partial<StoreEndpoint>;
    return Number.isInteger(e.pid) && Number.isInteger(e.port) ? { pid: e.pid!, port: e.port! } : undefined;
  } catch {
    return undefined;
  }
}
