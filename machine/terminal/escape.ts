/**
 * Text from the model, a tool, a server or a file shown to a person: at a terminal, and in the
 * console's page (console/api.ts sends display strings escaped here, so both follow one rule).
 * Escape sequences could recolour, move the cursor, rewrite the line (a carriage return), clear
 * the screen, set the window title, write the clipboard (OSC 52), plant links (OSC 8), hide text
 * or reorder it (bidirectional overrides), so that a human approves a command other than the one
 * that runs. Every such character is shown as a visible escape instead.
 */

// C1 controls (U+0080–U+009F: a terminal may read U+009B as CSI, U+009D as OSC), DEL; every
// format character (Cf: bidi embeddings, overrides, isolates and marks, zero-width spaces and
// joiners, the word joiner and invisible operators, the soft hyphen, the BOM, the invisible tag
// characters U+E0000–E007F); line and paragraph separators; and characters that are drawn as
// nothing though they are not Cf: the combining grapheme joiner, Hangul fillers, the Braille
// blank, Mongolian variation selectors, and the variation selectors beyond U+FE0F, which can
// carry bytes nobody sees. JSON.stringify leaves all of these raw. Emoji presentation (U+FE0F)
// and text presentation (U+FE0E) stay: they change how a visible character looks, nothing more.
const UNSAFE_BEYOND_C0 = '\\u007f-\\u009f\\p{Cf}\\p{Zl}\\p{Zp}\\u034f\\u115f\\u1160\\u180b-\\u180d\\u2800\\u3164\\uffa0\\ufe00-\\ufe0d\\u{e0100}-\\u{e01ef}';
// Plus the C0 controls (ESC, BEL, CR, backspace …). Matching control characters, and combining
// characters on their own (each is shown, whatever it would join), is the point.
// eslint-disable-next-line no-misleading-character-class
const UNSAFE = new RegExp(`[\\u0000-\\u001f${UNSAFE_BEYOND_C0}]`, 'gu');
// eslint-disable-next-line no-misleading-character-class
const UNSAFE_IN_JSON = new RegExp(`[${UNSAFE_BEYOND_C0}]`, 'gu');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** What escapeForTerminal may leave as it is: newlines and tabs where the text is laid out in lines and columns. */
interface EscapeOptions {
  keepNewlines?: boolean;
  keepTabs?: boolean;
}

/**
 * The text with every control or invisible formatting character shown as an escape: `\e`, `\r`,
 * `\x9b` up to U+00FF, `\u202e` up to U+FFFF, `\u{e0041}` beyond.
 */
export function escapeForTerminal(text: string, opts: EscapeOptions = {}): string {
  return text.replace(UNSAFE, (ch) => {
    if ((ch === '\n' && opts.keepNewlines) || (ch === '\t' && opts.keepTabs)) return ch;
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.codePointAt(0)!;
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * JSON text that is safe on a terminal and parses back to the same value: JSON.stringify escapes
 * C0 controls but leaves C1 controls, bidi and zero-width characters raw; those can only stand
 * inside strings, where `\uXXXX` (a surrogate pair beyond U+FFFF) means the same character.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (ch) => Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}
