/**
 * What the trace decodes from a history is no deeper than it can walk: a payload any client with
 * access to Temporal wrote (a signal's, an update's) nesting 100,000 deep decodes to a value cut
 * at 256 levels with a mark, which JSON.stringify and String() then take; shallow values are
 * decoded as they are, key order and all.
 */
import { describe, expect, it } from 'vitest';
import { decodeEvents, decodePayload, type HistoryEvent } from '../../history/trace/events';
import { parseArgs } from '../../history/trace/call-spans';

const LEVELS = 100_000;
const json = (text: string) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(text) });

/** A signal event as Temporal stores it, with this JSON text as its one argument. */
function signalEvent(name: string, text: string): HistoryEvent {
  return { eventId: 5, eventTime: { seconds: 1_700_000_000, nanos: 0 }, workflowExecutionSignaledEventAttributes: { signalName: name, identity: 'someone@somewhere', input: { payloads: [json(text)] } } } as unknown as HistoryEvent;
}

describe('decoded payloads are bounded', () => {
  it('a signal payload nesting 100,000 deep decodes cut at 256 levels, with a mark JSON.stringify and String() take', () => {
    const deep = `{"message":${'['.repeat(LEVELS)}"bottom"${']'.repeat(LEVELS)},"key":"k"}`;
    const [event] = decodeEvents([signalEvent('mcpQuestion', deep)]);
    expect(event).toMatchObject({ kind: 'signaled', name: 'mcpQuestion', identity: 'someone@somewhere' });
    const input = (event as { input: { message: unknown; key: string } }).input;
    const text = JSON.stringify(input);
    expect(text).toBe(`{"message":${'['.repeat(255)}"[nested deeper than 256 levels]"${']'.repeat(255)},"key":"k"}`);
    expect(String(input.message)).toBe('[nested deeper than 256 levels]');
  });

  it('a payload cut keeps the rest as it was: key order, a `__proto__` key as data; a shallow one is decoded unchanged', () => {
    const deepKeys = `{"z":${'['.repeat(300)}${']'.repeat(300)},"y":[1,{"c":null}],"__proto__":{"x":1}}`;
    const cut = decodePayload(json(deepKeys)) as Record<string, unknown>;
    expect(JSON.stringify(cut)).toBe(`{"z":${'['.repeat(255)}"[nested deeper than 256 levels]"${']'.repeat(255)},"y":[1,{"c":null}],"__proto__":{"x":1}}`);
    expect(Object.getPrototypeOf(cut)).toBe(Object.prototype);
    const text = '{"b":1,"a":[1,{"c":null}],"__proto__":{"x":1}}';
    expect(JSON.stringify(decodePayload(json(text)))).toBe(text);
  });

  it('call arguments are cut at 64 levels; a string with brackets in it is not nesting', () => {
    expect(JSON.stringify(parseArgs(`{"a":${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}}`))).toBe(`{"a":${'['.repeat(63)}"[nested deeper than 64 levels]"${']'.repeat(63)}}`);
    const brackets = `{"s":"${'['.repeat(1_000)}\\""}`;
    expect(parseArgs(brackets)).toEqual({ s: `${'['.repeat(1_000)}"` });
  });
});
