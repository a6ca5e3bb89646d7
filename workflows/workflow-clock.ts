/**
 * The workflow's "now": inside the workflow sandbox Date.now() is the time of the workflow task
 * being run, which history records, so a replay reads the same instant. Lint keeps clocks out of
 * workflow code; this is the one place that reads it, for the code that needs workflow time (a
 * `wait` turning `until` into a timer, an eval trial timed without an activity).
 */
export function workflowNow(): number {
  // eslint-disable-next-line no-restricted-properties -- workflow time, deterministic on replay (above)
  return Date.now();
}
