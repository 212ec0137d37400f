// The one API client: unwraps the `{code, message, data}` envelope (D1) or throws an ApiError.
// A 503 is retried after its Retry-After (at most `maxTries` tries in all); a 401 is reported to
// the app so it can send the person back to sign-in.

export class ApiError extends Error {
  readonly status: number;
  readonly code: number;
  constructor(status: number, code: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  form?: FormData;
  signal?: AbortSignal;
}

export interface ClientOptions {
  apiBase: string;
  getToken: () => string | null;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Called before waiting out a 503: `seconds` to wait, `attempt` the try that failed (1-based). */
  onBusy?: (seconds: number, attempt: number) => void;
  /** Called when a wait ends or the request settles, so a busy notice can be cleared. */
  onBusyEnd?: () => void;
  onUnauthorized?: (err: ApiError) => void;
  maxTries?: number;
}

interface Envelope {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds to wait from a Retry-After header: delta-seconds or an HTTP date; 1 when absent or bad. */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number {
  if (!value) return 1;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.max(0, parseInt(trimmed, 10));
  const date = Date.parse(trimmed);
  if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  return 1;
}

export function buildUrl(apiBase: string, path: string, query?: Query): string {
  let url = apiBase.replace(/\/$/, '') + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null || value === '') continue;
      params.set(key, String(value));
    }
    const qs = params.toString();
    if (qs) url += (url.includes('?') ? '&' : '?') + qs;
  }
  return url;
}

async function readEnvelope(res: Response): Promise<Envelope | null> {
  const text = await res.text();
  if (!text) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Envelope) : null;
  } catch {
    return null;
  }
}

function errorFrom(res: Response, env: Envelope | null): ApiError {
  const code = typeof env?.code === 'number' ? env.code : res.status;
  const message =
    typeof env?.message === 'string' && env.message
      ? env.message
      : `The server answered ${res.status}${res.statusText ? ' ' + res.statusText : ''}.`;
  return new ApiError(res.status, code, message);
}

export interface ApiClient {
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** A raw authorised fetch (for file downloads): retries 503s, throws ApiError on other errors. */
  fetchRaw(path: string, query?: Query, init?: RequestInit): Promise<Response>;
  url(path: string, query?: Query): string;
}

export function createClient(options: ClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const sleep = options.sleep ?? defaultSleep;
  const maxTries = options.maxTries ?? 3;

  async function send(url: string, init: RequestInit): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const headers = new Headers(init.headers);
      const token = options.getToken();
      if (token) headers.set('Authorization', `Bearer ${token}`);
      let res: Response;
      try {
        res = await doFetch(url, { ...init, headers });
      } catch (e) {
        if ((e as Error)?.name === 'AbortError') throw e;
        options.onBusyEnd?.();
        throw new ApiError(0, 0, 'The service could not be reached. Check your connection and try again.');
      }
      if (res.status === 503 && attempt < maxTries) {
        const seconds = retryAfterSeconds(res.headers.get('Retry-After'));
        options.onBusy?.(seconds, attempt);
        await sleep(seconds * 1000);
        continue;
      }
      options.onBusyEnd?.();
      return res;
    }
  }

  async function failed(res: Response): Promise<never> {
    const err = errorFrom(res, await readEnvelope(res));
    if (res.status === 401) options.onUnauthorized?.(err);
    throw err;
  }

  return {
    url: (path, query) => buildUrl(options.apiBase, path, query),

    async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
      const headers: Record<string, string> = { Accept: 'application/json' };
      let body: BodyInit | undefined;
      if (opts.form) body = opts.form;
      else if (opts.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(opts.body);
      }
      const res = await send(buildUrl(options.apiBase, path, opts.query), {
        method,
        headers,
        body,
        signal: opts.signal,
      });
      if (!res.ok) return failed(res);
      const env = await readEnvelope(res);
      if (!env) throw new ApiError(res.status, -1, 'The server sent an answer the console cannot read.');
      if (env.code !== 0) {
        const code = typeof env.code === 'number' ? env.code : -1;
        throw new ApiError(res.status, code, typeof env.message === 'string' ? env.message : 'Request failed.');
      }
      return env.data as T;
    },

    async fetchRaw(path, query, init = {}) {
      const res = await send(buildUrl(options.apiBase, path, query), init);
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) return res;
      if (!res.ok) return failed(res);
      return res;
    },
  };
}
