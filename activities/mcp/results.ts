/**
 * An MCP tool result as the model sees it: the text, structured content when the server gives
 * it, resources named by link, and media described (type, size) instead of carried: base64
 * images would fill the context and the history without telling the model anything it can read.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';

const ERROR_CHARS = 2000;
const RESOURCE_TEXT_CHARS = 20_000;
/**
 * Bounds on one result, whatever the server sends: the text head and tail (the store keeps what
 * is left whole, compression compacts it later), structured content by its JSON size, and lists.
 */
export const MAX_TEXT_CHARS = 256 * 1024;
export const MAX_STRUCTURED_CHARS = 64 * 1024;
const MAX_ITEMS = 100;

/** A resource the result links to or embeds as text. */
interface McpResourceItem {
  uri: string;
  name?: string;
  mimeType?: string;
  description?: string;
  /** The text of an embedded text resource (capped). */
  text?: string;
}

/** Binary content described, never carried. */
interface McpMediaItem {
  type: 'image' | 'audio' | 'resource';
  mimeType?: string;
  bytes: number;
  uri?: string;
}

interface McpToolOutput {
  content: string;
  structured?: unknown;
  resources?: McpResourceItem[];
  media?: McpMediaItem[];
}

/** Maps a tool result; `isError` becomes MCP_TOOL_ERROR with the server's own words. */
export function mcpResultToToolResult(server: string, tool: string, r: CallToolResult): ToolResult {
  const texts: string[] = [];
  const resources: McpResourceItem[] = [];
  const media: McpMediaItem[] = [];
  for (const item of r.content ?? []) {
    switch (item.type) {
      case 'text':
        texts.push(item.text);
        break;
      case 'image':
      case 'audio':
        media.push({ type: item.type, mimeType: item.mimeType, bytes: base64Bytes(item.data) });
        break;
      case 'resource_link':
        resources.push(defined({ uri: item.uri, name: item.name, mimeType: item.mimeType, description: item.description }));
        break;
      case 'resource': {
        const res = item.resource;
        if ('text' in res) resources.push(defined({ uri: res.uri, mimeType: res.mimeType, text: cap(res.text, RESOURCE_TEXT_CHARS) }));
        else media.push(defined({ type: 'resource' as const, uri: res.uri, mimeType: res.mimeType, bytes: base64Bytes(res.blob) }));
        break;
      }
    }
  }
  const content = headTail(texts.join('\n'), MAX_TEXT_CHARS);
  if (r.isError) {
    const message = content.trim() ? cap(content, ERROR_CHARS) : `${tool} on ${server} reported an error without a message`;
    return toolError('MCP_TOOL_ERROR', message, { suggestion: 'read the error and fix the arguments, or use another tool' });
  }
  const out: McpToolOutput = { content };
  if (r.structuredContent !== undefined) {
    const json = JSON.stringify(r.structuredContent);
    out.structured = json.length > MAX_STRUCTURED_CHARS ? { $truncated: `${json.slice(0, MAX_STRUCTURED_CHARS)}…`, chars: json.length } : r.structuredContent;
  }
  if (resources.length) out.resources = resources.slice(0, MAX_ITEMS);
  if (media.length) out.media = media.slice(0, MAX_ITEMS);
  return toolOk(out);
}

/** The head and the tail of a long text, with how much was left out between them. */
function headTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n… (${text.length - 2 * half} characters left out) …\n${text.slice(-half)}`;
}

/** Decoded size of base64 data, from its length (the data itself is never decoded). */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s+/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

// Drops undefined fields so results stay plain JSON.
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
