// The console's page: three views on the JSON API (console/api.ts), no framework, no build step.
// Every value from a session (model text, tool arguments and results, questions, names) enters the
// page as text (textContent, never HTML), so `<script>` in a reply is shown, not run. The API sends
// it already escaped by the CLI's own rule (machine/terminal/escape.ts: bidi controls, zero-width and
// other invisible characters as `\u202e` …), so the page draws what the terminal draws; the raw
// ids it acts on come apart, in `ref`, and are never drawn.
import { getJson, postJson, streamEvents } from './access.js';
import { ago, el, every, label, main, status } from './page.js';
import { sessionsView } from './sessions.js';
import { streamedText } from './streaming.js';
import { schedulesView } from './schedules.js';

let stopView = () => {};

/**
 * A call's arguments as every approval view shows them (console/api.ts builds `view` with the
 * CLI's code): the command, then every other argument; a long one cut, with its size and a
 * button that fetches it whole (`ref`: the raw session and call ids).
 */
function argsBlock(view, ref) {
  const row = (name, text, size, lines) => {
    // A string of several lines (a file's content) as those lines, escaped like the rest.
    const value = lines !== undefined ? el('pre', { class: 'arg-value arg-lines' }, lines) : el('code', { class: 'arg-value' }, text);
    const box = el('div', { class: 'arg', 'data-arg': name }, el('span', { class: 'arg-name' }, `${name}: `), value);
    if (size === undefined) return box;
    const more = el('button', { class: 'expand', type: 'button' }, `show all (${size})`);
    more.addEventListener('click', async (e) => {
      e.stopPropagation();
      more.disabled = true;
      try {
        const call = await getJson(`/api/call?session=${encodeURIComponent(ref.session_id)}&call=${encodeURIComponent(ref.call_id)}`);
        const whole = call.args.find((a) => a.name === name);
        value.replaceWith(el('pre', { class: 'arg-whole' }, whole ? whole.text : '(not found)'));
        more.replaceWith(el('span', { class: 'muted' }, whole ? ` (${whole.size})` : ''));
        if (call.problem) box.append(el('p', { class: 'error' }, call.problem));
      } catch (err) {
        more.disabled = false;
        box.append(el('span', { class: 'error' }, ` ${err.message}`));
      }
    });
    box.append(el('span', { class: 'arg-size muted' }, ` (${size}) `), more);
    return box;
  };
  const rows = [];
  if (view.headline !== undefined) rows.push(row('command', view.headline));
  for (const a of view.args) rows.push(row(a.name, a.text, a.clipped ? a.size : undefined, a.lines));
  if (!rows.length) rows.push(el('div', { class: 'muted' }, '(no arguments)'));
  return el('div', { class: 'args' }, ...rows);
}

/**
 * Approve, approve always (saying what it would grant) and deny with a reason, for one pending
 * call: the inbox's card and the session view draw the same. Each decision names the call and the
 * digest of exactly the tool and arguments shown (`ref`, raw); `act` posts it and says how it went.
 */
function decisionControls(ref, callId, alwaysGrants, act) {
  const url = `/api/sessions/${encodeURIComponent(ref.session_id)}/decide`;
  const decision = (more) => ({ call_id: ref.call_id, digest: ref.digest, ...more });
  const reason = el('input', { type: 'text', placeholder: 'reason for denying', class: 'reason' });
  return el('div', { class: 'decide' },
    el('div', {},
      el('button', { class: 'approve', onclick: () => act(url, decision({ approve: true }), `approved ${callId}`) }, 'Approve'),
      el('button', { class: 'approve-always', onclick: () => act(url, decision({ approve: true, always: true }), `approved ${callId} always`) }, 'Approve always'),
      el('span', { class: 'grant' }, `always grants: ${alwaysGrants}`),
    ),
    el('div', {}, reason, el('button', { class: 'deny', onclick: () => act(url, decision({ approve: false, reason: reason.value }), `denied ${callId}`) }, 'Deny')),
  );
}

/** Posts a decision and says in `box` how it went (with what `always` granted). */
function poster(box) {
  const say = (text, cls = '') => box.replaceChildren(el('p', { class: cls }, text));
  return async (url, value, what) => {
    try {
      const r = await postJson(url, value);
      say(`${what}${r.granted && r.granted.length ? `; granted for this session: ${r.granted.join('; ')}` : ''}`, 'ok');
    } catch (err) {
      say(`${what} failed: ${err.message}`, 'error');
    }
  };
}

/** One span's line: its kind, name and what came of it. */
function spanLine(s) {
  const out = s.output || {};
  const input = s.input || {};
  const bits = [];
  if (s.type === 'llm_call') {
    if (out.usage) bits.push(`${out.usage.total_tokens} tokens`);
    if (s.status === 'ok') bits.push((out.tool_calls || []).length ? `→ ${out.tool_calls.map((c) => c.name).join(', ')}` : `→ ${out.content ?? ''}`);
  }
  if (s.type === 'tool_call') {
    if (input.policy) bits.push(`${input.policy.decision}${input.policy.rule ? ` (${input.policy.rule})` : ''}`);
    if (out.approval && out.approval.by) bits.push(`${out.approval.approved ? 'approved' : 'denied'} by ${out.approval.by}`);
  }
  if (s.type === 'approval' && s.status !== 'running') bits.push(out.cancelled ? 'cancelled with its turn' : `${out.approved ? 'approved' : 'denied'}${out.by ? ` by ${out.by}` : ''}`);
  if (s.type === 'ask_user') bits.push(input.question || '', out.answer !== undefined ? `→ ${out.answer}` : '');
  if (s.type === 'wait') bits.push(s.status === 'running' ? `sleeping until ${input.until} (${input.reason})` : out.woken ? `woken${out.by ? ` by ${out.by}` : ''}${out.reason ? `: ${out.reason}` : ''}` : `slept until ${input.until} (${input.reason})`);
  if (s.type === 'message') bits.push(input.text || '', input.mode === 'interrupt' ? 'interrupted the step' : 'queued for the next step');
  if (s.type === 'turn') bits.push(input.user_message || '', out.terminated_by ? `→ ${out.terminated_by}` : out.status || '', out.answer !== undefined ? `: ${out.answer}` : '');
  if (s.error) bits.push(s.error);
  const dur = s.duration_ms === null ? '' : ` ${s.duration_ms} ms`;
  const line = [el('span', { class: 'name' }, label(s)), ' ', el('span', { class: s.status }, s.status), dur, ' ', bits.filter(Boolean).join(' · ')];
  // A call asked about: every argument, as the inbox and the CLI show it.
  if (s.type === 'approval' && s.view) line.push(el('div', { class: 'why muted' }, `risk ${input.risk || '?'} · ${input.rule ? `rule ${input.rule}: ` : ''}${input.reason || ''}`), argsBlock(s.view, s.ref));
  return line;
}

function sessionView(id) {
  const tree = el('div', { id: 'spans' });
  const nodes = new Map();
  const spans = new Map();
  const texts = new Map();
  const links = el('p', { id: 'links' });
  const place = (s) => {
    let node = nodes.get(s.span_id);
    if (!node) {
      const line = el('div', { class: 'line' });
      const details = el('div', { class: 'details', hidden: true });
      const kids = el('div', { class: 'children' });
      node = { box: el('div', { class: `span ${s.type}`, 'data-span': s.span_id, 'data-type': s.type }, line, details, kids), line, details, kids };
      if (s.type === 'step') line.addEventListener('click', () => expand(s.span_id));
      nodes.set(s.span_id, node);
      const parent = s.parent_id ? nodes.get(s.parent_id) : undefined;
      (parent ? parent.kids : tree).append(node.box);
    }
    spans.set(s.span_id, s);
    node.box.dataset.status = s.status;
    node.line.replaceChildren(...spanLine(s));
    // A call still waiting is decided here as in the inbox; the controls stay put (a half-typed
    // reason with them) until the call is decided or asked about anew (another digest).
    const digest = s.type === 'approval' && s.status === 'running' && s.ref.digest ? s.ref.digest : undefined;
    if (node.actionsFor !== digest) {
      if (node.actions) node.actions.remove();
      node.actions = digest ? decisionControls(s.ref, s.input.call_id, s.always_grants, act) : undefined;
      node.actionsFor = digest;
      if (node.actions) node.line.after(node.actions);
    }
    if (s.type === 'llm_call' || s.type === 'compress' || s.type === 'turn') costSoon();
    // A running turn's model text as it streams, under the turn's line (a session's own turns: a
    // sub-agent's turn, nested under its call, shows its steps).
    if (s.type === 'turn' && !s.parent_id && s.status === 'running' && !texts.has(s.ref.name)) texts.set(s.ref.name, streamedText(s.ref.name, node.line));
  };
  /** A step opened: its spans' requests and replies, arguments and results, with the payloads from the store. */
  const expand = async (stepId) => {
    const node = nodes.get(stepId);
    node.details.hidden = !node.details.hidden;
    if (node.details.hidden) return;
    const step = spans.get(stepId);
    const turn = [...spans.values()].find((x) => x.span_id === step.parent_id);
    node.details.replaceChildren(el('span', { class: 'muted' }, 'loading …'));
    try {
      const full = await getJson(`/api/trace?id=${encodeURIComponent(turn ? turn.ref.name : id)}&full=1`);
      const inStep = full.spans.filter((x) => x.parent_id === stepId || full.spans.some((p) => p.span_id === x.parent_id && p.parent_id === stepId));
      node.details.replaceChildren(...inStep.map((x) => el('div', { class: 'payload' }, el('strong', {}, label(x)), el('pre', {}, x.payload))));
    } catch (err) {
      node.details.replaceChildren(el('span', { class: 'error' }, err.message));
    }
  };
  const decided = el('div', { id: 'decided' });
  const act = poster(decided);
  // What the session cost so far, by turn: the ledger `harness cost` reads, read again when a model call or turn changes.
  const costBox = el('div', { id: 'cost' });
  let costTimer;
  let alive = true;
  const loadCost = async () => {
    costTimer = undefined;
    try {
      const c = await getJson(`/api/cost?id=${encodeURIComponent(id)}`);
      if (!alive) return;
      costBox.replaceChildren(
        el('p', {}, 'cost so far: ', el('span', { class: 'cost-total' }, c.total.text), el('span', { class: 'muted' }, ` (${c.total.tally})`)),
        el('table', { class: 'cost-turns' }, el('tbody', {}, ...c.turns.map((t) => el('tr', { 'data-turn': t.turn_id }, el('td', {}, t.turn_id), el('td', { class: 'turn-cost' }, t.text))))),
        ...c.notes.map((n) => el('p', { class: 'muted' }, `note: ${n}`)),
      );
    } catch (err) {
      if (alive) costBox.replaceChildren(el('p', { class: 'error' }, `cost: ${err.message}`));
    }
  };
  const costSoon = () => {
    if (costTimer === undefined) costTimer = setTimeout(loadCost, 500);
  };
  loadCost();
  // A message for the session, as `harness send`: queued for a running turn's next step, or
  // interrupting its step; an idle session starts a turn with it.
  const text = el('input', { type: 'text', id: 'send-text', placeholder: 'a message for this session' });
  const mode = el('select', { id: 'send-mode' }, el('option', { value: 'queue' }, 'at the next step'), el('option', { value: 'interrupt' }, 'interrupt the step'));
  const send = el('button', { id: 'send', type: 'button', onclick: () => act(`/api/sessions/${encodeURIComponent(id)}/send`, { text: text.value, mode: mode.value }, 'sent').then(() => (text.value = '')) }, 'Send');
  main.replaceChildren(el('h2', {}, `Session ${id}`), links, costBox, el('div', { class: 'send' }, text, ' ', mode, ' ', send), decided, el('p', { class: 'muted' }, 'Steps update live; click a step for its requests, replies, arguments and results.'), tree);
  getJson('/api/config').then((c) => {
    if (c.temporal_ui) links.replaceChildren(el('a', { href: `${c.temporal_ui}/namespaces/${encodeURIComponent(c.namespace)}/workflows/${encodeURIComponent(id)}`, target: '_blank', rel: 'noopener noreferrer' }, 'raw events in the Temporal Web UI'));
  });
  const stop = streamEvents(
    `/api/events?id=${encodeURIComponent(id)}`,
    (event, data) => {
      if (event === 'closed') return status('the session has closed');
      if (event !== 'message') return;
      const c = JSON.parse(data);
      place(c.span);
      status(`live · ${c.change} ${c.span.type} ${new Date().toLocaleTimeString()}`);
      window.__lastEvent = { at: Date.now(), sent: c.at, span: c.span.span_id, status: c.span.status, type: c.span.type };
    },
    () => status('reconnecting …'),
  );
  return () => {
    alive = false;
    clearTimeout(costTimer);
    stop();
    for (const stopText of texts.values()) stopText();
  };
}

function inboxView() {
  const list = el('div', { id: 'inbox' });
  const done = el('div', { id: 'done' });
  main.replaceChildren(el('h2', {}, 'Inbox: waiting for a person'), done, list);
  const act = poster(done);
  const card = (it) => {
    const ref = it.ref;
    const url = (a) => `/api/sessions/${encodeURIComponent(ref.session_id)}/${a}`;
    const head = el('div', { class: 'meta' }, el('a', { href: `#/s/${encodeURIComponent(ref.session_id)}` }, it.session_id), ` · ${it.turn_id || ''}${it.agent_path ? ` · sub-agent ${it.agent_path}` : ''} · ${ago(it.since)}`);
    if (it.kind === 'approval') {
      const c = it.call;
      // The decision names the call and the digest of exactly what this card shows.
      return el('div', { class: 'card approval', 'data-call': ref.call_id },
        head,
        el('div', {}, el('strong', {}, c.tool), ` · ${c.callId} · risk ${c.risk} · ${c.rule ? `rule ${c.rule}: ` : ''}${c.reason}`),
        argsBlock(c.view, ref),
        decisionControls(ref, c.callId, c.always_grants, act),
      );
    }
    if (it.kind === 'question') {
      const text = el('input', { type: 'text', placeholder: 'your answer', class: 'answer-text' });
      return el('div', { class: 'card question' }, head, el('p', {}, it.question), text, el('button', { class: 'answer', onclick: () => act(url('answer'), { text: text.value }, 'answered') }, 'Answer'));
    }
    return el('div', { class: 'card budget' }, head, 'waits for a budget decision: harness approve --budget +N, or deny');
  };
  let shown = '';
  return every(1500, async () => {
    const items = await getJson('/api/inbox');
    // Redrawn only when the items change, so a half-typed reason survives a refresh.
    const key = JSON.stringify(items.map((i) => [i.ref.session_id, i.kind, i.ref.call_id, i.ref.digest, i.call_id]));
    if (key === shown) return;
    shown = key;
    list.replaceChildren(...(items.length ? items.map(card) : [el('p', { class: 'muted' }, 'nothing waits for a person')]));
  });
}

async function countInbox() {
  try {
    const items = await getJson('/api/inbox');
    document.getElementById('inbox-count').textContent = items.length ? `(${items.length})` : '';
  } catch {
    /* the status line says what is wrong */
  }
}

function route() {
  stopView();
  const hash = location.hash || '#/';
  document.getElementById('nav-sessions').classList.toggle('active', hash === '#/');
  document.getElementById('nav-inbox').classList.toggle('active', hash === '#/inbox');
  document.getElementById('nav-schedules').classList.toggle('active', hash === '#/schedules');
  if (hash.startsWith('#/s/')) stopView = sessionView(decodeURIComponent(hash.slice(4)));
  else if (hash === '#/inbox') stopView = inboxView();
  else if (hash === '#/schedules') stopView = schedulesView();
  else stopView = sessionsView();
}

window.addEventListener('hashchange', route);
route();
setInterval(countInbox, 3000);
countInbox();
