import { setMaxListeners } from 'node:events';

/**
 * An AbortController for work that makes many Temporal calls under one signal (a listing, a
 * read through trouble). The client adds an `abort` listener to the signal for every call and
 * never removes it, so past ten calls Node prints a MaxListenersExceededWarning on the user's
 * terminal, a leak warning about listeners that live only as long as the command's read.
 */
export function callsAbort(): AbortController {
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  return stop;
}
