// A fake API behind the real client (createClient + setClient): each route answers from a
// handler, and every request is kept, so a test reads what the console sent.
import { createClient } from '../../src/api/client';
import { setClient } from '../../src/api/endpoints';

export interface Sent {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

/** A route's answer: the `data` of a success envelope, or a Response as it is. */
type Handler = (sent: Sent) => unknown;

export function envelope(status: number, code: number, message: string, data: unknown = null): Response {
  return new Response(JSON.stringify({ code, message, data }), { status, headers: { 'Content-Type': 'application/json' } });
}

/** Installs the fake as the app's client; `routes` keyed by `METHOD /path`. Answers the requests sent. */
export function fakeApi(routes: Record<string, Handler>): Sent[] {
  const sent: Sent[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const text = request.method === 'GET' ? '' : await request.text();
    const one: Sent = {
      method: request.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: text ? JSON.parse(text) : undefined,
    };
    sent.push(one);
    const handler = routes[`${one.method} ${one.path}`];
    if (!handler) return envelope(404, 404, `no route ${one.method} ${one.path}`);
    const answer = await handler(one);
    return answer instanceof Response ? answer : envelope(200, 0, 'success', answer ?? null);
  };
  setClient(createClient({ apiBase: 'http://console.test', getToken: () => 'tok', fetch, sleep: async () => {} }));
  return sent;
}
