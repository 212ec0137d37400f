import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, createClient, queryString, retryAfterSeconds } from '../src/api/client';
import { exportTask, importDnc, setClient } from '../src/api/endpoints';

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** The Request the client sent on call `n` (the client sends Request objects). */
function sent(f: { mock: { calls: unknown[][] } }, n = 0): Request {
  return f.mock.calls[n][0] as Request;
}

function client(fetchFn: typeof fetch, extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  return createClient({ apiBase: 'https://api.example', getToken: () => 'tok', fetch: fetchFn, ...extra });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('envelope', () => {
  it('returns data of a code 0 answer and sends the bearer token', async () => {
    const f = vi.fn(async (_req: Request) => json(200, { code: 0, message: 'success', data: { id: 'x' } }));
    const data = await client(f as unknown as typeof fetch).get('/api/task/detail/{id}', { params: { path: { id: 'x' } } });
    expect(data).toEqual({ id: 'x' });
    const req = sent(f);
    expect(req.url).toBe('https://api.example/api/task/detail/x');
    expect(req.method).toBe('GET');
    expect(req.headers.get('Authorization')).toBe('Bearer tok');
  });

  it('returns null data', async () => {
    const f = vi.fn(async () => json(200, { code: 0, message: 'success', data: null }));
    expect(await client(f as unknown as typeof fetch).post('/api/task/delete', { body: { id: 'x' } })).toBeNull();
  });

  it('sends JSON bodies and skips empty query values', async () => {
    const f = vi.fn(async (_req: Request) => json(200, { code: 0, message: 'success', data: 1 }));
    const api = client(f as unknown as typeof fetch);
    await api.post('/api/dataSource/add', { body: { dataSourceName: 'a' } });
    const req = sent(f);
    expect(req.method).toBe('POST');
    expect(await req.text()).toBe('{"dataSourceName":"a"}');
    expect(req.headers.get('Content-Type')).toBe('application/json');
    expect(queryString({ pageNum: 1, taskName: '', status: null, x: undefined })).toBe('pageNum=1');
    await api.get('/api/task/list', { params: { query: { pageNum: 1, pageSize: 20, taskName: '', status: undefined } } });
    expect(sent(f, 1).url).toBe('https://api.example/api/task/list?pageNum=1&pageSize=20');
  });

  it('throws ApiError with the message of an error envelope', async () => {
    const f = vi.fn(async () => json(404, { code: 404, message: 'task 01ABC not found', data: null }));
    const err = await client(f as unknown as typeof fetch)
      .get('/api/task/detail/{id}', { params: { path: { id: '01ABC' } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, code: 404, message: 'task 01ABC not found' });
  });

  it('throws on a non-zero code inside a 200', async () => {
    const f = vi.fn(async () => json(200, { code: 409, message: 'name exists', data: null }));
    await expect(client(f as unknown as typeof fetch).get('/api/settings')).rejects.toMatchObject({ code: 409, message: 'name exists' });
  });

  it('explains an answer that is not an envelope', async () => {
    const f = vi.fn(async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    await expect(client(f as unknown as typeof fetch).get('/api/settings')).rejects.toMatchObject({
      status: 502,
      message: 'The server answered 502 Bad Gateway.',
    });
  });

  it('turns a network failure into an ApiError with status 0', async () => {
    const f = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(client(f as unknown as typeof fetch).get('/api/settings')).rejects.toMatchObject({ status: 0 });
  });
});

describe('401', () => {
  it('calls onUnauthorized and throws', async () => {
    const onUnauthorized = vi.fn();
    const f = vi.fn(async () => json(401, { code: 401, message: 'token expired', data: null }));
    await expect(client(f as unknown as typeof fetch, { onUnauthorized }).get('/api/settings')).rejects.toMatchObject({ status: 401, message: 'token expired' });
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
    const p = client(f as unknown as typeof fetch, { onBusy, onBusyEnd }).get('/api/settings');
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
    const p = client(f as unknown as typeof fetch).get('/api/settings');
    const caught = p.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5000);
    const err = await caught;
    expect(f).toHaveBeenCalledTimes(3);
    expect(err).toMatchObject({ status: 503, message: 'dependency busy' });
  });

  it('waits out a 429 of the tenant\'s request rate the same way', async () => {
    const sleep = vi.fn(async () => {});
    const onBusy = vi.fn();
    const f = vi
      .fn()
      .mockResolvedValueOnce(json(429, { code: 429, message: 'too many requests', data: null }, { 'Retry-After': '1' }))
      .mockResolvedValueOnce(json(200, { code: 0, message: 'success', data: 'ok' }));
    await expect(client(f as unknown as typeof fetch, { sleep, onBusy }).get('/api/settings')).resolves.toBe('ok');
    expect(f).toHaveBeenCalledTimes(2);
    expect(onBusy).toHaveBeenCalledWith(1, 1);
    expect(sleep).toHaveBeenCalledWith(1000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('5')).toBe(5);
    expect(retryAfterSeconds(null)).toBe(1);
    expect(retryAfterSeconds('soon')).toBe(1);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterSeconds('Tue, 01 Jan 2030 00:00:07 GMT', now)).toBe(7);
  });
});

describe('typed calls', () => {
  it('encodes path parameters and asks for JSON', async () => {
    const f = vi.fn(async (_req: Request) => json(200, { code: 0, message: 'success', data: null }));
    await client(f as unknown as typeof fetch).get('/api/task/{id}/stat', { params: { path: { id: 'a/b c' } } });
    expect(sent(f).url).toBe('https://api.example/api/task/a%2Fb%20c/stat');
    expect(sent(f).headers.get('Accept')).toBe('application/json');
  });

  it('sends the same body again after a 503', async () => {
    const f = vi
      .fn()
      .mockResolvedValueOnce(json(503, { code: 503, message: 'busy', data: null }, { 'Retry-After': '0' }))
      .mockResolvedValueOnce(json(200, { code: 0, message: 'success', data: null }));
    await client(f as unknown as typeof fetch, { sleep: async () => {} }).post('/api/task/stop', { body: { id: 'x', reason: 'r' } });
    expect(f).toHaveBeenCalledTimes(2);
    expect(await sent(f, 0).text()).toBe('{"id":"x","reason":"r"}');
    expect(await sent(f, 1).text()).toBe('{"id":"x","reason":"r"}');
  });

  it('sends a file as multipart form data', async () => {
    const f = vi.fn(async (_req: Request) => json(200, { code: 0, message: 'success', data: { total: 1 } }));
    setClient(client(f as unknown as typeof fetch));
    await importDnc(new File(['phoneNumber\n+12025550101\n'], 'dnc.csv', { type: 'text/csv' }));
    const req = sent(f);
    expect(req.url).toBe('https://api.example/api/dnc/batchImport');
    expect(req.headers.get('Content-Type')).toMatch(/^multipart\/form-data; boundary=/);
    const form = await req.formData();
    expect((form.get('file') as File).name).toBe('dnc.csv');
  });

  it('answers a file download as it is, and a redirect too', async () => {
    const f = vi
      .fn()
      .mockResolvedValueOnce(new Response('id,phoneNumber\n', { status: 200, headers: { 'Content-Type': 'text/csv' } }))
      .mockResolvedValueOnce(new Response(null, { status: 303, headers: { Location: 'https://bucket.example/f.csv' } }))
      .mockResolvedValueOnce(json(404, { code: 404, message: 'task x not found', data: null }));
    setClient(client(f as unknown as typeof fetch));
    const res = await exportTask('x', { status: 2, format: 'csv' });
    expect(sent(f).url).toBe('https://api.example/api/task/x/export?status=2&format=csv');
    expect(await res.text()).toBe('id,phoneNumber\n');
    const moved = await exportTask('x', { format: 'excel' }, 'manual');
    expect(sent(f, 1).redirect).toBe('manual');
    expect(moved.headers.get('Location')).toBe('https://bucket.example/f.csv');
    await expect(exportTask('x', { format: 'csv' })).rejects.toMatchObject({ status: 404, message: 'task x not found' });
  });
});
