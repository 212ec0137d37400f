import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { back, forward, pageOf, START, tokenOf, type Trail } from '../state/cursor';

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Requests whose answers land in order of asking: only the latest request's answer lands. */
export interface Latest {
  loading: boolean;
  error: unknown;
  /** Runs `work`; its value goes to `land` (and clears the error) unless a later run began. */
  run: <T>(work: () => Promise<T>, land: (value: T) => void) => Promise<void>;
}

/** The loading state and error of requests of which only the latest one's answer lands. */
export function useLatest(loadingAtFirst = true): Latest {
  const [loading, setLoading] = useState(loadingAtFirst);
  const [error, setError] = useState<unknown>(null);
  const seq = useRef(0);
  const run = useCallback(async <T,>(work: () => Promise<T>, land: (value: T) => void) => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const value = await work();
      if (mine === seq.current) {
        land(value);
        setError(null);
      }
    } catch (e) {
      if (mine === seq.current) setError(e);
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, []);
  return { loading, error, run };
}

/** Loads `fn` whenever `deps` change; a stale answer never overwrites a newer one. */
export function useLoader<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const { loading, error, run } = useLatest();
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const reload = useCallback(() => run(() => fnRef.current(), setData), [run]);
  useEffect(() => {
    void reload();
  }, deps);
  return { data, error, loading, reload };
}

/** What a change made from a page came to: its message, or its error with what explains it. */
export interface Outcome<C> {
  message: string | null;
  failure: { error: unknown; context?: C } | null;
}

/**
 * One change at a time from a page: busy while `work` runs; then `done` (or what `work`
 * answered) as its message and `after` (a reload), or its error with `context`.
 */
export function useAction<C = undefined>(after: () => Promise<void> | void) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome<C>>({ message: null, failure: null });
  async function run(work: () => Promise<unknown>, done?: string, context?: C): Promise<boolean> {
    setBusy(true);
    setOutcome({ message: null, failure: null });
    try {
      const answer = await work();
      setOutcome({ message: done ?? (typeof answer === 'string' ? answer : null), failure: null });
      await after();
      return true;
    } catch (error) {
      setOutcome({ message: null, failure: { error, context } });
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { busy, ...outcome, run, fail: (error: unknown) => setOutcome({ message: null, failure: { error } }) };
}

/** Cursor paging of a list (D5): the current page's token and number, Next, Previous, and back to
 * the first page (when a filter changes). */
export function useCursor() {
  const [trail, setTrail] = useState<Trail>(START);
  return {
    token: tokenOf(trail),
    pageNum: pageOf(trail),
    next: (nextToken: string) => setTrail(forward(trail, nextToken)),
    previous: () => setTrail(back(trail)),
    reset: () => setTrail(START),
  };
}

/** `value` after it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/** Whether the tab is visible. */
export function useVisible(): boolean {
  const [visible, setVisible] = useState(document.visibilityState !== 'hidden');
  useEffect(() => {
    const on = () => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, []);
  return visible;
}

export interface PollingOptions {
  /** Milliseconds from the end of one tick to the start of the next. */
  every: number;
  /** Polls only while true (default true). */
  active?: boolean;
  /** At most this many ticks, then it stops (default: no limit). */
  limit?: number;
}

/**
 * Polling: `tick` at once, then again `every` ms after each tick has ended, while `active` and
 * while the tab is visible. Hidden, it pauses; shown again, it ticks at once. It stops when
 * `tick` answers `false` (nothing more to wait for), after `limit` ticks, after a tick that
 * throws, and on unmount; a change of `deps` (or of `every`) starts it afresh. `tick` gets a
 * signal aborted once its answer is no longer wanted (paused, stopped, restarted or unmounted).
 */
export function usePolling(
  tick: (signal: AbortSignal) => Promise<boolean | void>,
  { every, active = true, limit = Infinity }: PollingOptions,
  deps: unknown[],
): void {
  const visible = useVisible();
  const tickRef = useRef(tick);
  tickRef.current = tick;
  // Set once it has stopped for good (not paused), so showing the tab again does not resume it.
  const done = useRef(false);
  useEffect(() => {
    done.current = false;
  }, deps);
  useEffect(() => {
    if (!visible || !active || done.current) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ticks = 0;
    const loop = async () => {
      let more: boolean | void;
      try {
        more = await tickRef.current(controller.signal);
      } catch (error) {
        if (!controller.signal.aborted) done.current = true;
        throw error;
      }
      if (controller.signal.aborted) return;
      if (more === false || ++ticks >= limit) {
        done.current = true;
        return;
      }
      timer = setTimeout(loop, every);
    };
    void loop();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [visible, active, every, ...deps]);
}

export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · outbound`;
  }, [title]);
}
