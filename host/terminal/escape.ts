/**
 * Text from the model, a tool, a server or a file shown to a person at a terminal. Escape
 * sequences could recolour, move the cursor, rewrite the line (a carriage return), clear the
 * screen, set the window title, write the clipboard (OSC 52), plant links (OSC 8), hide text or
 * reorder it (bidirectional overrides), so that a human approves a command other than the one
 * that runs. Every such character is shown as a visible escape instead.
 */

// C1 controls (U+0080–U+009F: a terminal may read U+009B as CSI, U+009D as OSC), DEL; bidi
// embeddings, overrides and isolates; zero-width and invisible format characters; line and
// paragraph separators. JSON.stringify leaves all of these raw.
const UNSAFE_BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff';
// Plus the C0 controls (ESC, BEL, CR, backspace …). Matching control characters is the point.
const UNSAFE = new RegExp(`[\\u0000-\\u001f${UNSAFE_BEYOND_C0}]`, 'gu');
const UNSAFE_IN_JSON = new RegExp(`[${UNSAFE_BEYOND_C0}]`, 'gu');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** What escapeForTerminal may leave as it is: newlines and tabs where the text is laid out in lines and columns. */
export interface EscapeOptions {
  keepNewlines?: boolean;
  keepTabs?: boolean;
}

/** The text with every control or invisible formatting character shown as an escape (`\e`, `\r`, `\u202e` …). */
export function escapeForTerminal(text: string, opts: EscapeOptions = {}): string {
  return text.replace(UNSAFE, (ch) => {
    if ((ch === '\n' && opts.keepNewlines) || (ch === '\t' && opts.keepTabs)) return ch;
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON text that is safe on a terminal and parses back to the same value: JSON.stringify escapes
 * C0 controls but leaves C1 controls, bidi and zero-width characters raw; those can only stand
 * inside strings, where `\uXXXX` means the same character.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

