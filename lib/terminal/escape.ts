/**
 * Text from the model (tool arguments, questions) shown to a person at a terminal. Escape
 * sequences could recolour, move the cursor, rewrite the line (a carriage return), hide text or
 * reorder it (bidirectional overrides), so that a human approves a command other than the one
 * that runs. Every such character is shown as a visible escape instead.
 */

// C0 controls, DEL, C1 controls; bidi embeddings, overrides and isolates; zero-width and
// invisible format characters; line and paragraph separators. Matching control characters is
// the point here, hence the lint exception.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** The text with every control or invisible formatting character shown as an escape (`\e`, `\r`, `\u202e` …). */
export function escapeForTerminal(text: string, opts: { keepNewlines?: boolean } = {}): string {
  return text.replace(UNSAFE, (ch) => {
    if (ch === '\n' && opts.keepNewlines) return ch;
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
