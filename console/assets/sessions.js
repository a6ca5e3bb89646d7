// The console's session list: every session of the queues the console lists, with its state,
// what it waits for and what it cost; a queue column once more than one queue is listed.
import { getJson } from './access.js';
import { ago, el, every, main, stateText, waitingFor } from './page.js';

export function sessionsView() {
  const state = el('select', { id: 'state-filter' }, ...['all', 'running', 'waiting', 'idle', 'closed'].map((s) => el('option', { value: s }, s)));
  const search = el('input', { type: 'text', id: 'search', placeholder: 'search id or task' });
  const body = el('tbody', { id: 'sessions-body' });
  const head = el('thead', {});
  let rows = [];
  // The queue column shows once the console lists more than one task queue (every queue, or several named).
  let showQueue = false;
  const render = () => {
    const names = ['session', ...(showQueue ? ['queue'] : []), 'state', 'turns', 'tokens', 'cost', 'waiting for', 'last task', 'last activity'];
    head.replaceChildren(el('tr', {}, ...names.map((h) => el('th', {}, h))));
    const q = search.value.toLowerCase();
    const f = state.value;
    const shown = rows.filter((r) => {
      const waiting = r.state.startsWith('waiting_');
      const closed = !['idle', 'running'].includes(r.state) && !waiting;
      const pass = f === 'all' || (f === 'waiting' ? waiting : f === 'closed' ? closed : r.state === f);
      return pass && (!q || r.session_id.toLowerCase().includes(q) || (r.last_task || '').toLowerCase().includes(q));
    });
    body.replaceChildren(
      ...shown.map((r) =>
        el('tr', { 'data-session': r.ref.session_id },
          el('td', {}, el('a', { href: `#/s/${encodeURIComponent(r.ref.session_id)}` }, r.session_id)),
          ...(showQueue ? [el('td', { class: 'queue' }, r.task_queue || '')] : []),
          el('td', { class: `state-${r.state}` }, stateText(r)),
          el('td', {}, String(r.turns)),
          // The ledger's figures (`harness cost`'s), with the running turn's calls so far; the row's own count when it could not be read.
          el('td', { class: 'tokens' }, r.cost ? r.cost.tokens : String(r.usage.total_tokens)),
          el('td', { class: 'cost' }, r.cost ? r.cost.money : ''),
          el('td', {}, waitingFor(r)),
          el('td', {}, r.last_task || ''),
          el('td', { class: 'muted' }, ago(r.last_activity_at)),
        ),
      ),
    );
  };
  state.addEventListener('change', render);
  search.addEventListener('input', render);
  const queues = el('p', { class: 'muted', id: 'queues' });
  main.replaceChildren(
    el('h2', {}, 'Sessions'),
    queues,
    el('div', { class: 'filters' }, state, search),
    el('table', {}, head, body),
  );
  render();
  getJson('/api/config').then((c) => {
    queues.replaceChildren(c.queues && c.queues.length ? `task queues: ${c.queues.join(', ')}` : 'every task queue');
    showQueue = !c.queues || c.queues.length !== 1;
    render();
  }, () => {});
  return every(1500, async () => {
    rows = await getJson('/api/sessions');
    render();
  });
}
