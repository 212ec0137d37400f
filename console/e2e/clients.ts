// The typed clients of the local server that the browser test and the bench call, and the types
// of what they answer: the console's own API client (src/api/client.ts, typed by openapi.yaml)
// for `/api/...`; openapi-fetch typed by local.openapi.yaml (generated/local.d.ts,
// `npm run gen:local`) for the local-only `/local/*` routes; and the domain events that
// `/local/events` lists, typed by events.schema.json (generated/events.d.ts, `npm run gen:events`).
import createFetchClient, { type Client } from 'openapi-fetch';
import { createClient, type ApiClient } from '../src/api/client.ts';
import type { OutboundDomainEventsD20 } from './generated/events.d.ts';
import type { components, paths } from './generated/local.d.ts';

/** The API on `base` as the console calls it, with `token` as its Bearer token, each request sent once. */
export function apiClient(base: string, token: string): ApiClient {
  return createClient({ apiBase: base, getToken: () => token, maxTries: 1 });
}

/** The local server's own `/local/*` routes. */
export type LocalClient = Client<paths>;

export function localClient(base: string): LocalClient {
  return createFetchClient<paths>({ baseUrl: base });
}

/** A call the simulated provider placed, as `GET /local/calls` lists it (D22). */
export type PlacedCall = components['schemas']['PlacedCall'];

/** An event the bus delivered (D20), as events.schema.json gives it. */
export type BusEvent = OutboundDomainEventsD20;

/** The kinds of event (`detail-type`). */
export type EventKind = BusEvent['detail-type'];

/** An event of kind `K`, its `detail` that kind's. */
export type EventOf<K extends EventKind> = Extract<BusEvent, { 'detail-type': K }>;

/** The events of `kind` among `events`, in their order. */
export function eventsOf<K extends EventKind>(events: BusEvent[], kind: K): EventOf<K>[] {
  return events.filter((event): event is EventOf<K> => event['detail-type'] === kind);
}

/** `GET /local/calls`: the calls the simulated provider placed, oldest first. */
export async function placedCalls(local: LocalClient): Promise<PlacedCall[]> {
  const { data, response } = await local.GET('/local/calls');
  if (!data) throw new Error(`GET /local/calls answered ${response.status}`);
  return data;
}

/**
 * `GET /local/events`: the events the bus delivered, oldest first. local.openapi.yaml leaves an
 * event's source, detail-type and detail to events.schema.json, whose types they take here.
 */
export async function busEvents(local: LocalClient): Promise<BusEvent[]> {
  const { data, response } = await local.GET('/local/events');
  if (!data) throw new Error(`GET /local/events answered ${response.status}`);
  return data as BusEvent[];
}
