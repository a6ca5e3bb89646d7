// The page's access to the console's API. The token comes in the fragment of the link
// `harness console` printed (#token=…): a fragment never goes to a server, so it reaches no log
// and no Referer. It is kept in this tab's sessionStorage, which belongs to this origin alone
// (scheme, host and port), and sent as `Authorization: Bearer` with every API call. Never a
// cookie: cookies are not scoped by port, so the browser would hand one for 127.0.0.1 to every
// other web app it visits on 127.0.0.1.
const TOKEN_KEY = 'harness_console_token';

/** Takes the token out of the printed link into sessionStorage and out of the address bar (and history). */
function takeTokenFromLink() {
  const m = /^#token=([^&]*)/.exec(location.hash);
  if (!m) return;
  window.sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  window.history.replaceState(null, '', `${location.pathname}#/`);
}
takeTokenFromLink();

function withToken(headers = {}) {
  const token = window.sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...headers, Authorization: `Bearer ${token}` } : headers;
}

async function failure(res) {
  const body = await res.json().catch(() => ({}));
  return new Error((body.error || res.statusText) + (body.hint ? ` (${body.hint})` : ''));
}

export async function getJson(url) {
  const res = await fetch(url, { credentials: 'omit', headers: withToken() });
  if (!res.ok) throw await failure(res);
  return res.json();
}

export async function postJson(url, value) {
  const res = await fetch(url, { method: 'POST', credentials: 'omit', headers: withToken({ 'Content-Type': 'application/json' }), body: JSON.stringify(value) });
  if (!res.ok) throw await failure(res);
  return res.json();
}

/**
 * Reads a Server-Sent Events stream with fetch (EventSource cannot send the token): `on(event,
 * data)` for each event. A stream that breaks or fails is opened again after a pause, as
 * EventSource would (the server sends every span again from the first, which the page places
 * once); one that ends with `closed` or `unknown` is over. Returns the function that stops it.
 */
export function streamEvents(url, on, onTrouble) {
  const stop = new window.AbortController();
  const run = async () => {
    while (!stop.signal.aborted) {
      let over = false;
      try {
        const res = await fetch(url, { credentials: 'omit', headers: withToken(), signal: stop.signal });
        if (!res.ok) throw await failure(res);
        const reader = res.body.pipeThrough(new window.TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = 'message';
            const data = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
            }
            if (!data.length) continue; // a ping
            if (event === 'closed' || event === 'unknown') over = true;
            on(event, data.join('\n'));
          }
        }
        if (!over) onTrouble(new Error('the stream ended'));
      } catch (err) {
        if (stop.signal.aborted) return;
        onTrouble(err);
      }
      if (over) return;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  };
  run();
  return () => stop.abort();
}
