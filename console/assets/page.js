// What every view of the console's page draws with: elements made from text (never HTML), the
// status line, times and states in words, and polling.
export const main = document.getElementById('main');

/** An element with attributes, handlers (on*) and children (strings become text nodes). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

export function status(text) {
  document.getElementById('status').textContent = text;
}

export function ago(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.round(s / 60)} min ago` : s < 86400 ? `${Math.round(s / 3600)} h ago` : `${Math.round(s / 86400)} d ago`;
}

/** A span's label: its kind, then its name unless the name says the kind already (`step 1`, not `step step 1`). */
export function label(s) {
  return s.name === s.type || s.name.startsWith(`${s.type} `) ? s.name : `${s.type} ${s.name}`;
}

export function stateText(r) {
  if (r.sleeping) return `sleeping until ${r.sleeping.until}`;
  if (r.state === 'running' && r.step) return `running step ${r.step}`;
  return r.state.replace(/_/g, ' ');
}

/** Who the session waits for, in words. */
export function waitingFor(r) {
  if (r.sleeping) return `its wait: ${r.sleeping.reason}`;
  if (!r.pending) return '';
  if (r.pending.kind === 'approvals') return `approval of ${r.pending.calls.map((c) => c.tool).join(', ')}`;
  if (r.pending.kind === 'question') return `an answer: ${r.pending.question}`;
  return 'a budget decision';
}

/** Polls `load` every `ms` until the view changes. */
export function every(ms, load) {
  let alive = true;
  const tick = async () => {
    if (!alive) return;
    try {
      await load();
      status(`updated ${new Date().toLocaleTimeString()}`);
    } catch (err) {
      status(`error: ${err.message}`);
    }
    if (alive) setTimeout(tick, ms);
  };
  tick();
  return () => (alive = false);
}
