/**
 * `${VAR}` references in server env values and headers, resolved from the worker's
 * environment at connect time: the session config keeps the reference, so a secret written
 * that way never enters workflow input or history.
 */
import { McpConfigError } from './errors';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Returns `values` with every `${NAME}` replaced by `env[NAME]`. Only that form is a
 * reference (no defaults, no escapes): anything else, `$HOME` included, is kept as written.
 * A variable the worker does not set throws McpConfigError naming server, field and variable.
 */
export function resolveTemplates(
  values: Record<string, string>,
  env: Record<string, string | undefined>,
  server: string,
  field: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(REFERENCE, (_whole, name: string) => {
      const resolved = env[name];
      if (resolved === undefined) {
        throw new McpConfigError(server, `${field} ${key} uses \${${name}}, which is not set in the worker's environment`);
      }
      return resolved;
    });
  }
  return out;
}
