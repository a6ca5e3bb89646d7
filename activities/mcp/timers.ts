/** Cancellation and clocks of MCP requests: the pool's own, so a call's clock can stop while a human answers. */

/** A controller that aborts, with the same reason, when `signal` does. */
export function linked(signal?: AbortSignal): AbortController {
  const ac = new AbortController();
  if (signal?.aborted) ac.abort(signal.reason);
  else signal?.addEventListener('abort', () => ac.abort(signal.reason), { once: true });
  return ac;
}

/** Waits for a shared promise, giving up (without cancelling it) when the caller's signal fires. */
export function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A one-shot timer whose clock stops between pause() and resume() (nested pauses count). */
export function pausableTimer(ms: number, fire: () => void) {
  let left = ms;
  let started = Date.now();
  let paused = 0;
  const onFire = () => {
    handle = undefined;
    left = Infinity;
    fire();
  };
  let handle: NodeJS.Timeout | undefined = setTimeout(onFire, left);
  return {
    pause: () => {
      if (paused++ > 0 || !handle) return;
      clearTimeout(handle);
      handle = undefined;
      left -= Date.now() - started;
    },
    resume: () => {
      if (--paused > 0 || left === Infinity) return;
      started = Date.now();
      handle = setTimeout(onFire, Math.max(0, left));
    },
    clear: () => {
      clearTimeout(handle);
      handle = undefined;
      left = Infinity;
    },
  };
}
