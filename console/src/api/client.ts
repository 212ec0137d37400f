// The one API client, typed by the contract: every call names a path of `../openapi.yaml` (the
// generated `paths` of schema.ts), and its parameters, body and answer take their types from
// that path, through openapi-fetch. On top of it:
//   - the `{code, message, data}` envelope (D1) is unwrapped, or an ApiError thrown with the
//     envelope's message;
//   - a 503, or a 429 of the tenant's request rate (D26), is retried after its Retry-After (at
//     most `maxTries` tries in all), with `onBusy` / `onBusyEnd` around each wait so the app can
//     show a notice;
//   - a 401 is reported to the app (`onUnauthorized`) so it can send the person back to sign-in.
import createFetchClient, { type MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './schema.ts';

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

export interface ClientOptions {
  apiBase: string;
  getToken: () => string | null;
  /** Sends one request (default: the global fetch); called with a Request. */
  fetch?: (request: Request) => Promise<Response>;
  sleep?: (ms: number) => Promise<void>;
  /** Called before waiting out a 503 or 429: `seconds` to wait, `attempt` the try that failed (1-based). */
  onBusy?: (seconds: number, attempt: number) => void;
  /** Called when a wait ends or the request settles, so a busy notice can be cleared. */
  onBusyEnd?: () => void;
  onUnauthorized?: (err: ApiError) => void;
  maxTries?: number;
}

/** The methods of the contract the console calls. */
type Method = 'get' | 'post';

/** The paths of the contract that answer `M`. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: { responses: unknown } } ? P : never;
}[keyof paths];

/** What a call of `M P` may carry: `params` (path and query), `body`, and fetch's own options. */
export type InitOf<M extends Method, P extends PathOf<M>> = MaybeOptionalInit<paths[P], M>;

/** The init argument: optional when nothing in it is required. */
type Args<I> = undefined extends I ? [init?: I] : [init: I];

/** The `data` of the success envelope `M P` answers (its 200 `application/json`). */
export type DataOf<M extends Method, P extends PathOf<M>> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': { data: infer D } } } };
}
  ? D
  : never;

export interface ApiClient {
  /** `GET path`: the `data` of its envelope. */
  get<P extends PathOf<'get'>>(path: P, ...init: Args<InitOf<'get', P>>): Promise<DataOf<'get', P>>;
  /** `POST path`: the `data` of its envelope. */
  post<P extends PathOf<'post'>>(path: P, ...init: Args<InitOf<'post', P>>): Promise<DataOf<'post', P>>;
  /**
   * `GET path` answered by a file (downloads): the answer itself, unread; a redirect (3xx, or
   * the opaque answer of `redirect: 'manual'`) is answered too. Other failures throw ApiError.
   */
  file<P extends PathOf<'get'>>(path: P, ...init: Args<InitOf<'get', P>>): Promise<Response>;
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

/** The query string of `query` (no `?`): empty, null and undefined values are left out. */
export function queryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  return params.toString();
}

/** An answer's body as an envelope: null when it is empty or not a JSON object. */
function envelopeOf(body: unknown): Envelope | null {
  let value = body;
  if (typeof value === 'string') {
    if (!value) return null;
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return value && typeof value === 'object' ? (value as Envelope) : null;
}

function errorFrom(res: Response, env: Envelope | null): ApiError {
  const code = typeof env?.code === 'number' ? env.code : res.status;
  const message =
    typeof env?.message === 'string' && env.message
      ? env.message
      : `The server answered ${res.status}${res.statusText ? ' ' + res.statusText : ''}.`;
  return new ApiError(res.status, code, message);
}

/** What openapi-fetch answers, whatever the path: its parsed body (or error) and the answer. */
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

export function createClient(options: ClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((request: Request) => fetch(request));
  const sleep = options.sleep ?? defaultSleep;
  const maxTries = options.maxTries ?? 3;

  /** Sends `request` with the token; waits out a 503 or 429 (up to `maxTries` tries): nothing
   *  was done, and the same request may be sent again after Retry-After. */
  async function transport(request: Request): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const req = request.clone();
      const token = options.getToken();
      if (token) req.headers.set('Authorization', `Bearer ${token}`);
      let res: Response;
      try {
        res = await doFetch(req);
      } catch (e) {
        if ((e as Error)?.name === 'AbortError') throw e;
        options.onBusyEnd?.();
        throw new ApiError(0, 0, 'The service could not be reached. Check your connection and try again.');
      }
      if ((res.status === 503 || res.status === 429) && attempt < maxTries) {
        const seconds = retryAfterSeconds(res.headers.get('Retry-After'));
        options.onBusy?.(seconds, attempt);
        await sleep(seconds * 1000);
        continue;
      }
      options.onBusyEnd?.();
      return res;
    }
  }

  const http = createFetchClient<paths>({ baseUrl: options.apiBase, fetch: transport, querySerializer: queryString });
  // The typed methods below check path, init and answer against `paths`; this one only sends.
  const send = http.request as unknown as (method: 'GET' | 'POST', path: string, init: object) => Promise<Answer>;

  function failed(answer: Answer): never {
    const err = errorFrom(answer.response, envelopeOf(answer.error));
    if (answer.response.status === 401) options.onUnauthorized?.(err);
    throw err;
  }

  async function call(method: 'GET' | 'POST', path: string, init: object = {}): Promise<never> {
    const answer = await send(method, path, { ...init, parseAs: 'text', headers: { Accept: 'application/json' } });
    const res = answer.response;
    if (!res.ok) failed(answer);
    const env = envelopeOf(answer.data ?? '');
    if (!env) throw new ApiError(res.status, -1, 'The server sent an answer the console cannot read.');
    if (env.code !== 0) {
      const code = typeof env.code === 'number' ? env.code : -1;
      throw new ApiError(res.status, code, typeof env.message === 'string' ? env.message : 'Request failed.');
    }
    return env.data as never;
  }

  return {
    get: (path, ...[init]) => call('GET', path, init),
    post: (path, ...[init]) => call('POST', path, init),
    async file(path, ...[init]) {
      const answer = await send('GET', path, { ...init, parseAs: 'stream' });
      const res = answer.response;
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) return res;
      if (!res.ok) failed(answer);
      return res;
    },
  };
}
