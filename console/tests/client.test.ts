import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, buildUrl, createClient, retryAfterSeconds } from '../src/api/client';

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

function client(fetchFn: typeof fetch, extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  return createClient({ apiBase: 'https://api.example', getToken: () => 'tok', fetch: fetchFn, ...extra });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('envelope', () => {
  it('returns data of a code 0 answer and sends the bearer token', async () => {
    const f = vi.fn(async (_url: RequestInfo | URL, _init?: RequestInit) => json(200, { code: 0, message: 'success', data: { id: 'x' } }));
    const data = await client(f as unknown as typeof fetch).request<{ id: string }>('GET', '/api/task/detail/x');
    expect(data).toEqual({ id: 'x' });
    const [url, init] = f.mock.calls[0];
    expect(url).toBe('https://api.example/api/task/detail/x');
    expect(new Headers(init!.headers).get('Authorization')).toBe('Bearer tok');
  });

  it('returns null data', async () => {
    const f = vi.fn(async () => json(200, { code: 0, message: 'success', data: null }));
    expect(await client(f as unknown as typeof fetch).request('POST', '/api/task/delete', { body: { id: 'x' } })).toBeNull();
  });

  it('sends JSON bodies and skips empty query values', async () => {
    const f = vi.fn(async (_u: RequestInfo | URL, _i?: RequestInit) => json(200, { code: 0, message: 'success', data: 1 }));
    await client(f as unknown as typeof fetch).request('POST', '/api/dataSource/add', { body: { dataSourceName: 'a' } });
    const init = f.mock.calls[0][1]!;
    expect(init.body).toBe('{"dataSourceName":"a"}');
    expect(new Headers(init.headers).get('Content-Type')).toBe('application/json');
    expect(buildUrl('', '/api/task/list', { pageNum: 1, taskName: '', status: null, x: undefined })).toBe('/api/task/list?pageNum=1');
  });

  it('throws ApiError with the message of an error envelope', async () => {
    const f = vi.fn(async () => json(404, { code: 404, message: 'task 01ABC not found', data: null }));
    const err = await client(f as unknown as typeof fetch).request('GET', '/api/task/detail/01ABC').catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, code: 404, message: 'task 01ABC not found' });
  });

  it('throws on a non-zero code inside a 200', async () => {
    const f = vi.fn(async () => json(200, { code: 409, message: 'name exists', data: null }));
    await expect(client(f as unknown as typeof fetch).request('GET', '/x')).rejects.toMatchObject({ code: 409, message: 'name exists' });
  });

  it('explains an answer that is not an envelope', async () => {
    const f = vi.fn(async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    await expect(client(f as unknown as typeof fetch).request('GET', '/x')).rejects.toMatchObject({
      status: 502,
      message: 'The server answered 502 Bad Gateway.',
    });
  });

  it('turns a network failure into an ApiError with status 0', async () => {
    const f = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(client(f as unknown as typeof fetch).request('GET', '/x')).rejects.toMatchObject({ status: 0 });
  });
});

describe('401', () => {
  it('calls onUnauthorized and throws', async () => {
    const onUnauthorized = vi.fn();
    const f = vi.fn(async () => json(401, { code: 401, message: 'token expired', data: null }));
    await expect(client(f as unknown as typeof fetch, { onUnauthorized }).request('GET', '/x')).rejects.toMatchObject({ status: 401, message: 'token expired' });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(onUnauthorized.mock.calls[0][0]).toBeInstanceOf(ApiError);
  });
});

describe('503 retry', () => {
  it('waits Retry-After seconds, then retries and succeeds', async () => {
    vi.useFakeTimers();
    const onBusy = vi.fn();
    const onBusyEnd = vi.fn();
    const f = vi
      .fn()
      .mockResolvedValueOnce(json(503, { code: 503, message: 'busy', data: null }, { 'Retry-After': '2' }))
      .mockResolvedValueOnce(json(200, { code: 0, message: 'success', data: 'ok' }));
    const p = client(f as unknown as typeof fetch, { onBusy, onBusyEnd }).request('GET', '/x');
    await vi.advanceTimersByTimeAsync(0);
    expect(f).toHaveBeenCalledTimes(1);
    expect(onBusy).toHaveBeenCalledWith(2, 1);
    await vi.advanceTimersByTimeAsync(1999);
    expect(f).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(p).resolves.toBe('ok');
    expect(f).toHaveBeenCalledTimes(2);
    expect(onBusyEnd).toHaveBeenCalled();
  });

  it('gives up after 3 tries with the 503 message', async () => {
    vi.useFakeTimers();
    const f = vi.fn(async () => json(503, { code: 503, message: 'dependency busy', data: null }, { 'Retry-After': '1' }));
    const p = client(f as unknown as typeof fetch).request('GET', '/x');
    const caught = p.catch((e) => e);
    await vi.advanceTimersByTimeAsync(5000);
    const err = await caught;
    expect(f).toHaveBeenCalledTimes(3);
    expect(err).toMatchObject({ status: 503, message: 'dependency busy' });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('5')).toBe(5);
    expect(retryAfterSeconds(null)).toBe(1);
    expect(retryAfterSeconds('soon')).toBe(1);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterSeconds('Tue, 01 Jan 2030 00:00:07 GMT', now)).toBe(7);
  });
});
