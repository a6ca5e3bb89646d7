/**
 * An MCP tool result as the model sees it: the text, structured content when the server gives
 * it, resources named by link, and media described (type, size) instead of carried: base64
 * images would fill the context and the history without telling the model anything it can read.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolError, toolOk } from '../../common/errors';
import type { ToolResult } from '../../common/types';

const ERROR_CHARS = 2000;
const RESOURCE_TEXT_CHARS = 20_000;

/** A resource the result links to or embeds as text. */
export interface McpResourceItem {
  uri: string;
  name?: string;
  mimeType?: string;
  description?: string;
  /** The text of an embedded text resource (capped). */
  text?: string;
}

/** Binary content described, never carried. */
export interface McpMediaItem {
  type: 'image' | 'audio' | 'resource';
  mimeType?: string;
  bytes: number;
  uri?: string;
}

export interface McpToolOutput {
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
  const content = texts.join('\n');
  if (r.isError) {
    const message = content.trim() ? cap(content, ERROR_CHARS) : `${tool} on ${server} reported an error without a message`;
    return toolError('MCP_TOOL_ERROR', message, { suggestion: 'read the error and fix the arguments, or use another tool' });
  }
  const out: McpToolOutput = { content };
  if (r.structuredContent !== undefined) out.structured = r.structuredContent;
  if (resources.length) out.resources = resources;
  if (media.length) out.media = media;
  return toolOk(out);
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
