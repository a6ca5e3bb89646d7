/**
 * Constants that decide which commands a workflow issues, so that replaying a recorded history
 * depends on them: when a turn continues as new, when a model call is handed on or a workflow
 * task ends, when the repeat guard stops a turn, when working memory refuses a fact.
 *
 * THE RULE: changing a value here changes what recorded histories replay to. Never edit one in
 * place. Keep the old value, add the new one beside it, and choose between them with
 * `patched('<a-new-unique-name>')` at the place that reads it, so runs recorded before the
 * change replay with the old value. test/workflows/replay-constants.test.ts holds these values
 * and fails when one changes, to send the reader here.
 *
 * (Limits a session names in its input, such as limits.continueAsNewAfterEvents, replay from
 * the input and may change freely; the values below are what runs without such a limit use.)
 */

/**
 * A turn continues as new between steps once its run has counted about this many events, when
 * its limits name no turnEventBudget (sessions started before that limit existed).
 */
export const TURN_EVENT_BUDGET_WHEN_UNSET = 4000;

/**
 * The events each kind of thing adds to a turn's run, with the workflow task that follows it,
 * as the turn counts them to decide when to continue as new (run-events.ts).
 */
export const RUN_EVENT_COST = {
  /** An activity: scheduled, started, completed, and the next workflow task. */
  activity: 6,
  /** A local activity: its marker (it resolves within the workflow task). */
  local: 1,
  /** A signal or update that arrives (its event or two) and the workflow task it wakes. */
  message: 5,
  /** Waiting on a human: the signals to the session around the wait and a timer. */
  wait: 8,
} as const;

/**
 * Version markers a run's start is counted with (runs from before the patch sets took about ten,
 * a marker and a search-attribute update each; runs since take one or two but count the same,
 * so the turns of the support window decide continue-as-new on replay as they did).
 */
export const RUN_START_VERSION_MARKERS = 20;

/** Model time local calls may take unrecorded before the next model call ends the workflow task (its steps then show). */
export const SHOWN_WITHIN_MS = 1_000;

/**
 * How long a call that follows quick steps not yet recorded may run locally: a slow one is handed
 * on (recording them) soon, so that a crash during it redoes little.
 */
export const AFTER_UNRECORDED_MS = 500;

/** How long a model call runs locally before it is handed on, when the session's limits name no modelLocalMs. */
export const MODEL_LOCAL_MS_WHEN_UNSET = 3_000;

/** Repeat guard: fingerprints longer than this are kept as their hash (a reply's arguments may be megabytes). */
export const REPEAT_MAX_KEY_CHARS = 256;

/**
 * Repeat guard: sorting the keys of megabytes of arguments costs seconds of a workflow task; past
 * this much argument text in a step, calls are compared as written (a verbatim repetition is still seen).
 */
export const REPEAT_MAX_CANONICAL_CHARS = 64 * 1024;

/** Characters (keys and values) working memory may grow to. */
export const MAX_MEMORY_CHARS = 32 * 1024;
