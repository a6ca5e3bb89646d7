// A running turn's model text as it streams: the turn's typed events (the server's
// /api/turn-events, HarnessClient.events underneath), of which the page draws the
// model_text_delta ones into a box under the turn's line. The text is the server's, already
// escaped, and enters the page as text only. The box holds the current model call's text, says
// which step it is of, and goes once the turn ends (its spans then show the whole reply).
import { streamEvents } from './access.js';
import { el } from './page.js';

/** Streams the turn's model text into a box placed after `line`; returns the function that stops it. */
export function streamedText(turnId, line) {
  const head = el('div', { class: 'muted' }, '');
  const text = el('pre', { class: 'streamed-text' }, '');
  const box = el('div', { class: 'streaming', 'data-turn': turnId, hidden: true }, head, text);
  line.after(box);
  let call = '';
  // A stream opened again starts from the turn's first event: what was drawn is not drawn twice.
  let last = { offset: -1, seq: -1 };
  const seen = (e) => e.offset < last.offset || (e.offset === last.offset && e.seq <= last.seq);
  const stop = streamEvents(
    `/api/turn-events?id=${encodeURIComponent(turnId)}`,
    (event, data) => {
      if (event !== 'message') {
        if (event === 'closed' || event === 'unknown') box.remove();
        return;
      }
      const e = JSON.parse(data);
      if (seen(e)) return;
      last = { offset: e.offset, seq: e.seq };
      if (e.type === 'final') return box.remove();
      if (e.type !== 'model_text_delta') return;
      const key = `${e.step}/${e.callIndex}/${e.attempt}`;
      if (key !== call) {
        call = key;
        text.textContent = '';
        head.textContent = `step ${e.step}: the model is writing …`;
      }
      text.textContent += e.text;
      box.hidden = false;
    },
    () => {},
  );
  return () => {
    stop();
    box.remove();
  };
}
