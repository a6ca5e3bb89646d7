/**
 * What the CLI prints for people: strings, from anywhere, escaped on the way out, and the few
 * control sequences our own code emits (colours, a progress line's carriage return). Those are
 * Controls, values of a class that no string can become: the only Controls are the constants
 * below, so text from a model, a tool, a server or a file can never reach the terminal as a
 * sequence, however it was built.
 */
import { escapeForTerminal } from './escape';

/** One of our own terminal control sequences (the constants of this class; nothing else makes one). */
export class Control {
  static readonly reset = new Control('\u001b[0m');
  static readonly bold = new Control('\u001b[1m');
  static readonly dim = new Control('\u001b[2m');
  static readonly red = new Control('\u001b[31m');
  static readonly green = new Control('\u001b[32m');
  static readonly yellow = new Control('\u001b[33m');
  static readonly blue = new Control('\u001b[34m');
  static readonly magenta = new Control('\u001b[35m');
  static readonly cyan = new Control('\u001b[36m');
  /** Back to the start of the line, to redraw a progress line in place. */
  static readonly carriageReturn = new Control('\r');

  readonly #sequence: string;

  private constructor(sequence: string) {
    this.#sequence = sequence;
  }

  /** The raw sequence (terminalString's business; a string written anywhere is escaped again). */
  static sequenceOf(c: Control): string {
    return c.#sequence;
  }

  /** A Control pasted into a template literal would turn into text: refuse loudly instead. */
  toString(): never {
    throw new Error('a terminal Control is written as a piece of Text, not interpolated into a string');
  }
}

/** Text for the terminal: strings (escaped when written), our own Controls, or a sequence of both. */
export type Text = string | Control | readonly Text[];

/** The colours and weights our output uses. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan';

/** `text` in a style, back to normal after it. */
export function styled(style: Style, text: Text): Text {
  return [Control[style], text, Control.reset];
}

/**
 * The one way from Text to what reaches the terminal: every string escaped (newlines and tabs
 * kept, they lay out lines and columns), every Control as its sequence.
 */
export function terminalString(text: Text): string {
  if (typeof text === 'string') return escapeForTerminal(text, { keepNewlines: true, keepTabs: true });
  if (text instanceof Control) return Control.sequenceOf(text);
  return text.map(terminalString).join('');
}

/** The Text without its Controls (what a terminal without colours shows). */
export function plainString(text: Text): string {
  if (typeof text === 'string') return escapeForTerminal(text, { keepNewlines: true, keepTabs: true });
  if (text instanceof Control) return '';
  return text.map(plainString).join('');
}
