/**
 * Which API key a model endpoint gets. Keys live with the worker and are bound to hosts: a key
 * is sent only to the host it belongs to, matched exactly. The endpoint itself comes from the
 * session config, which may come from a config file in an untrusted checkout: binding keys to
 * hosts is what keeps such a file from sending OPENAI_API_KEY to a server of its choosing.
 *
 * Bindings: OPENAI_API_KEY → api.openai.com and the host of the worker's own OPENAI_BASE_URL;
 * DEEPSEEK_API_KEY → api.deepseek.com; HARNESS_MODEL_KEYS="host=VAR,host:port=VAR" for others.
 * Keys go over https only; a local endpoint (loopback) without a binding gets no key at all.
 */

/** The key for an endpoint, or why there is none. */
type KeyChoice = { apiKey: string; host: string } | { problem: string };

/** The endpoint of a session that names none: the official client's default. */
export const DEFAULT_MODEL_ENDPOINT = 'https://api.openai.com/v1';
// Local OpenAI-compatible servers (vLLM, Ollama, the scripted model) usually need no key.
const NO_KEY = 'none';

/** Decides which key (if any) the endpoint at `baseUrl` may receive, from the worker's environment. */
export function keyForEndpoint(baseUrl: string | undefined, env: Record<string, string | undefined>): KeyChoice {
  let url: URL;
  try {
    url = new URL(baseUrl ?? DEFAULT_MODEL_ENDPOINT);
  } catch {
    return { problem: `the model endpoint ${JSON.stringify(baseUrl)} is not a valid URL` };
  }
  const host = hostKey(url);
  const local = isLoopback(url.hostname);
  // Every binding for this host, most specific first; the first whose variable is set wins.
  const candidates = bindings(env).filter((b) => b.host === host || b.host === url.hostname.toLowerCase());
  const bound = candidates.find((b) => env[b.variable]);
  if (bound) {
    if (url.protocol !== 'https:' && !local) {
      return { problem: `refusing to send ${bound.variable} to ${url.origin} over plain http; use https` };
    }
    return { apiKey: env[bound.variable]!, host };
  }
  if (local) return { apiKey: NO_KEY, host };
  if (candidates.length) return { problem: `${candidates.map((b) => b.variable).join(' / ')} is not set on the worker` };
  return {
    problem:
      `no API key is bound to ${host} on the worker (a key is sent only to the host it is bound to): ` +
      `set OPENAI_BASE_URL=${url.origin}${url.pathname} in the worker's environment, or HARNESS_MODEL_KEYS=${host}=<VARIABLE>`,
  };
}

interface Binding {
  host: string;
  variable: string;
}

/** The hosts (`host` or `host:port`) some key of the worker is bound to. */
export function keyBoundHosts(env: Record<string, string | undefined>): string[] {
  return bindings(env).map((b) => b.host);
}

/** The variables keys are read from on a worker with this environment (names only). */
export function keyVariables(env: Record<string, string | undefined>): string[] {
  return [...new Set(bindings(env).map((b) => b.variable))];
}

function bindings(env: Record<string, string | undefined>): Binding[] {
  const out: Binding[] = [];
  for (const entry of (env.HARNESS_MODEL_KEYS ?? '').split(',')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.push({ host: entry.slice(0, eq).trim().toLowerCase(), variable: entry.slice(eq + 1).trim() });
  }
  out.push({ host: 'api.deepseek.com', variable: 'DEEPSEEK_API_KEY' });
  // The worker's own environment is trusted: its base URL is where its key is meant to go.
  const own = parseUrl(env.OPENAI_BASE_URL);
  if (own) out.push({ host: hostKey(own), variable: 'OPENAI_API_KEY' });
  out.push({ host: 'api.openai.com', variable: 'OPENAI_API_KEY' });
  return out;
}

function parseUrl(text: string | undefined): URL | undefined {
  try {
    return text ? new URL(text) : undefined;
  } catch {
    return undefined;
  }
}

/** `host` for the default port of the scheme, else `host:port` (lower case). */
function hostKey(url: URL): string {
  return (url.port ? `${url.hostname}:${url.port}` : url.hostname).toLowerCase();
}

function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1';
}
