// The console's schedules: the harness's schedules (`harness schedule list`), each with when it
// fires, its next firing, whom it sends to and what; refreshed every few seconds.
import { getJson } from './access.js';
import { ago, el, every, main } from './page.js';

/** `in 4 min` (or `due`) before a time to come. */
function until(iso) {
  const s = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (s <= 0) return 'due';
  return s < 60 ? `in ${s} s` : s < 3600 ? `in ${Math.round(s / 60)} min` : s < 86400 ? `in ${Math.round(s / 3600)} h` : `in ${Math.round(s / 86400)} d`;
}

export function schedulesView() {
  const body = el('tbody', { id: 'schedules-body' });
  const head = el('thead', {}, el('tr', {}, ...['schedule', 'when', 'next firing', 'sends to', 'message', 'firings', 'queue'].map((h) => el('th', {}, h))));
  main.replaceChildren(el('h2', {}, 'Schedules'), el('table', {}, head, body));
  return every(3000, async () => {
    const rows = await getJson('/api/schedules');
    body.replaceChildren(
      ...(rows.length
        ? rows.map((r) =>
            el('tr', { 'data-schedule': r.ref.id },
              el('td', {}, r.id),
              el('td', {}, `${r.spec} (overlap: ${r.overlap})`),
              el('td', { class: r.paused ? 'next muted' : 'next' }, r.paused ? 'paused' : r.next_firing ? `${new Date(r.next_firing).toLocaleString()} (${until(r.next_firing)})` : 'none'),
              el('td', {}, r.target),
              el('td', {}, r.text),
              el('td', {}, r.firings ? `${r.firings}, last ${ago(r.last_firing)}` : 'none yet'),
              el('td', { class: 'queue' }, r.task_queue),
            ),
          )
        : [el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'no schedules: make one with `harness schedule create`'))]),
    );
  });
}
