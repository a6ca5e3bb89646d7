/**
 * Characters that must never reach a person raw, each with the escape every view shows instead:
 * controls, bidi controls, zero-width and other invisible characters. One table for the escaping
 * rule's unit test (test/cli/escape.test.ts) and for the console in Chromium
 * (test/console/approval-views.test.ts): the terminal and the page show the same.
 */
export interface InvisibleCharacter {
  char: string;
  /** How a one-line view shows it. */
  shown: string;
  what: string;
}

export const INVISIBLE: readonly InvisibleCharacter[] = [
  { char: '\u001b', shown: '\\e', what: 'escape (starts terminal sequences)' },
  { char: '\u0007', shown: '\\x07', what: 'bell (ends OSC sequences)' },
  { char: '\r', shown: '\\r', what: 'carriage return (rewrites the line)' },
  { char: '\n', shown: '\\n', what: 'line feed (in a one-line view)' },
  { char: '\t', shown: '\\t', what: 'tab (in a one-line view)' },
  { char: '\u0008', shown: '\\x08', what: 'backspace' },
  { char: '\u007f', shown: '\\x7f', what: 'delete' },
  { char: '\u0085', shown: '\\x85', what: 'next line (C1)' },
  { char: '\u009b', shown: '\\x9b', what: 'control sequence introducer (C1)' },
  { char: '\u00ad', shown: '\\xad', what: 'soft hyphen' },
  { char: '\u034f', shown: '\\u034f', what: 'combining grapheme joiner' },
  { char: '\u061c', shown: '\\u061c', what: 'Arabic letter mark' },
  { char: '\u115f', shown: '\\u115f', what: 'Hangul choseong filler' },
  { char: '\u180e', shown: '\\u180e', what: 'Mongolian vowel separator' },
  { char: '\u200b', shown: '\\u200b', what: 'zero-width space' },
  { char: '\u200c', shown: '\\u200c', what: 'zero-width non-joiner' },
  { char: '\u200d', shown: '\\u200d', what: 'zero-width joiner' },
  { char: '\u200e', shown: '\\u200e', what: 'left-to-right mark' },
  { char: '\u200f', shown: '\\u200f', what: 'right-to-left mark' },
  { char: '\u2028', shown: '\\u2028', what: 'line separator' },
  { char: '\u2029', shown: '\\u2029', what: 'paragraph separator' },
  { char: '\u202a', shown: '\\u202a', what: 'left-to-right embedding' },
  { char: '\u202b', shown: '\\u202b', what: 'right-to-left embedding' },
  { char: '\u202c', shown: '\\u202c', what: 'pop directional formatting' },
  { char: '\u202d', shown: '\\u202d', what: 'left-to-right override' },
  { char: '\u202e', shown: '\\u202e', what: 'right-to-left override' },
  { char: '\u2060', shown: '\\u2060', what: 'word joiner' },
  { char: '\u2062', shown: '\\u2062', what: 'invisible times' },
  { char: '\u2066', shown: '\\u2066', what: 'left-to-right isolate' },
  { char: '\u2067', shown: '\\u2067', what: 'right-to-left isolate' },
  { char: '\u2068', shown: '\\u2068', what: 'first strong isolate' },
  { char: '\u2069', shown: '\\u2069', what: 'pop directional isolate' },
  { char: '\u2800', shown: '\\u2800', what: 'Braille pattern blank' },
  { char: '\u3164', shown: '\\u3164', what: 'Hangul filler' },
  { char: '\ufe00', shown: '\\ufe00', what: 'variation selector 1' },
  { char: '\ufeff', shown: '\\ufeff', what: 'zero-width no-break space (BOM)' },
  { char: '\ufff9', shown: '\\ufff9', what: 'interlinear annotation anchor' },
  { char: '\u{e0001}', shown: '\\u{e0001}', what: 'language tag' },
  { char: '\u{e0041}', shown: '\\u{e0041}', what: 'tag Latin capital A (invisible text)' },
  { char: '\u{e0100}', shown: '\\u{e0100}', what: 'variation selector 17 (carries hidden bytes)' },
];

/** A line holding every character of the table, each between markers: `<0:…>` with the raw character. */
export function everyInvisible(): string {
  return INVISIBLE.map((c, i) => `<${i}:${c.char}>`).join('');
}

/** The same line as a one-line view must show it. */
export function everyInvisibleShown(): string {
  return INVISIBLE.map((c, i) => `<${i}:${c.shown}>`).join('');
}
