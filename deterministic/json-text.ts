/**
 * JSON.parse for files a user or a checkout named, whose syntax errors say where the text goes
 * wrong and never quote it. V8's messages do quote it (`Unexpected token 'a', "api_key=sk-…" is
 * not valid JSON`), and the file may be anything: a checkout can point a path at ~/.aws/credentials.
 */

/** A syntax error located by line and column (1-based), without any of the text. */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    readonly line: number,
    readonly column: number,
    /** What was wrong there, in words ("unexpected character"). */
    readonly what: string,
  ) {
    super(`invalid JSON at line ${line}, column ${column} (${what})`);
  }
}

/** Parses JSON text; a syntax error is a JsonSyntaxError carrying only a position and a reason. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const found = firstSyntaxError(text) ?? { offset: 0, what: 'not valid JSON' };
    const before = text.slice(0, found.offset);
    const line = before.split('\n').length;
    const column = found.offset - before.lastIndexOf('\n');
    throw new JsonSyntaxError(line, column, found.what);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;
const LITERALS = ['true', 'false', 'null'];

type State = 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'after';

/**
 * Where the first syntax error of `text` is (a UTF-16 offset) and what it is; undefined when
 * the text is valid JSON. Iterative, so deep nesting cannot overflow the stack.
 */
export function firstSyntaxError(text: string): { offset: number; what: string } | undefined {
  let i = 0;
  const n = text.length;
  const open: string[] = []; // '}' or ']' for each container still open
  let state: State = 'value';
  const at = (what: string) => ({ offset: i, what });
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  /** Consumes a string starting at the quote under `i`; the error when it is malformed. */
  const string = (): { offset: number; what: string } | undefined => {
    i++;
    for (;;) {
      if (i >= n) return at('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return at('control character in a string');
      if (c === 0x5c) {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return at('invalid escape in a string');
        i = ESCAPE.lastIndex;
      } else i++;
    }
  };
  for (;;) {
    skipSpace();
    if (state === 'after') {
      const close = open.at(-1);
      if (close === undefined) return i < n ? at('unexpected text after the JSON value') : undefined;
      if (i >= n) return at('unexpected end of input');
      if (text[i] === ',') {
        i++;
        state = close === '}' ? 'key' : 'value';
      } else if (text[i] === close) {
        i++;
        open.pop();
      } else {
        return at(close === '}' ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array element");
      }
      continue;
    }
    if (i >= n) return at('unexpected end of input');
    const c = text[i]!;
    if (state === 'key' || state === 'keyOrClose') {
      if (state === 'keyOrClose' && c === '}') {
        i++;
        open.pop();
        state = 'after';
        continue;
      }
      if (c !== '"') return at('expected a double-quoted property name');
      const bad = string();
      if (bad) return bad;
      skipSpace();
      if (i >= n) return at('unexpected end of input');
      if (text[i] !== ':') return at("expected ':' after a property name");
      i++;
      state = 'value';
      continue;
    }
    // A value (or, right after '[', the end of an empty array).
    if (state === 'valueOrClose' && c === ']') {
      i++;
      open.pop();
      state = 'after';
      continue;
    }
    if (c === '{' || c === '[') {
      i++;
      open.push(c === '{' ? '}' : ']');
      state = c === '{' ? 'keyOrClose' : 'valueOrClose';
      continue;
    }
    state = 'after';
    if (c === '"') {
      const bad = string();
      if (bad) return bad;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) return at('invalid number');
      i = NUMBER.lastIndex;
      continue;
    }
    const literal = LITERALS.find((word) => text.startsWith(word, i));
    if (!literal) return at('unexpected character');
    i += literal.length;
  }
}
