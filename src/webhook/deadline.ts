// A time limit as an AbortSignal that fires on time, however long the wait and
// however often the garbage collector runs meanwhile.
//
// `AbortSignal.any([signal, AbortSignal.timeout(ms)])` does not: the timeout
// signal is held only weakly by its own timer (so that an unobserved one can be
// collected), and AbortSignal.any() holds its sources weakly too. Once nothing
// else refers to the timeout signal, a collection drops it and the wait goes on
// forever. Here an ordinary timer owns the controller, so the deadline lives
// exactly as long as its timer, and keeps the process alive until it fires or
// is cleared.

/** The longest delay a Node timer takes; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface Deadline {
  /** Aborts when the time is up (with a TimeoutError) or when the parent signal aborts (with its reason). */
  readonly signal: AbortSignal;
  /** True once the time ran out; false when the parent aborted first or the deadline was cleared. */
  readonly expired: boolean;
  /** Stops the clock and lets go of the parent signal. Call it as soon as the guarded work is over. */
  clear(): void;
}

export function startDeadline(ms: number, parent?: AbortSignal): Deadline {
  if (!(ms >= 0 && ms <= MAX_TIMER_MS)) throw new RangeError(`a deadline must be from 0 to ${MAX_TIMER_MS} ms; got ${ms}`);
  const controller = new AbortController();
  let expired = false;
  const onParentAbort = () => {
    clear();
    controller.abort(parent!.reason);
  };
  const timer = setTimeout(() => {
    expired = true;
    clear();
    controller.abort(new DOMException(`the deadline of ${ms} ms passed`, 'TimeoutError'));
  }, ms);
  function clear(): void {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  }
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear,
  };
}
