/**
 * Questions an MCP server asks during a call (elicitation), as the person reads and answers them:
 * the text shown, what an answer must be, and the result sent back to the server. Pure: the turn
 * validates answers with it, the activity builds the server's result with it.
 */
import type { McpQuestion } from './messages';

/** The question as the human sees it: the server's message and what fields it wants. */
export function questionText(q: McpQuestion): string {
  const props = (q.requestedSchema.properties ?? {}) as Record<string, { type?: string; description?: string; title?: string }>;
  const required = new Set(Array.isArray(q.requestedSchema.required) ? (q.requestedSchema.required as string[]) : []);
  const fields = Object.entries(props).map(([name, p]) => `${name}${required.has(name) ? '*' : ''} (${p.type ?? 'any'}${p.description ? `: ${p.description}` : ''})`);
  const single = singleField(q.requestedSchema);
  const how = single
    ? `answer with the ${single} text, or a JSON object, or "decline" / "cancel"`
    : fields.length
      ? 'answer with a JSON object of these fields, or "decline" / "cancel"'
      : 'answer "accept", "decline" or "cancel"';
  return [`[MCP server ${q.server}] ${q.message}`, ...(fields.length ? [`fields: ${fields.join('; ')}`] : []), `(${how})`].join('\n');
}

/** Refuses an answer the server could not take, before it is written to history. */
export function validateMcpAnswer(q: McpQuestion, text: string): void {
  const t = text.trim();
  if (['accept', 'decline', 'cancel'].includes(t.toLowerCase())) return;
  if (t.startsWith('{')) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch (err) {
      throw new Error(`the answer looks like JSON but does not parse: ${(err as Error).message}`);
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('the answer must be a JSON object of the fields asked for');
    return;
  }
  if (!singleField(q.requestedSchema)) throw new Error('this question has several fields: answer with a JSON object, or "decline" / "cancel"');
}

/** The one field a plain-text answer fills, when the schema asks for exactly one string-like field. */
function singleField(schema: Record<string, unknown>): string | undefined {
  const props = Object.entries((schema.properties ?? {}) as Record<string, { type?: string }>);
  return props.length === 1 && (props[0]![1].type ?? 'string') === 'string' ? props[0]![0] : undefined;
}

/** What the server gets for an answer (checked by validateMcpAnswer when it was given). */
export function elicitationResult(schema: Record<string, unknown>, text: string): { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> } {
  const t = text.trim();
  const word = t.toLowerCase();
  if (word === 'decline' || word === 'cancel') return { action: word };
  if (word === 'accept') return { action: 'accept', content: {} };
  if (t.startsWith('{')) return { action: 'accept', content: JSON.parse(t) as Record<string, unknown> };
  const field = singleField(schema);
  return field ? { action: 'accept', content: { [field]: t } } : { action: 'decline' };
}
