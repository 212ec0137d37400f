// A task's telephony (D22): its caller ID, flow, the contact fields each call sends its flow, the
// results the flow may set, and what a call that reaches voicemail does. The form's values, the
// fields a data source offers, the checks the API makes (with its own words), and what is sent.
import type { AddTask, Contact, Settings, TaskView, Voicemail } from '../api/types';

/** A task's `callerId` that picks, per call, the tenant's number nearest the called party. */
export const LOCAL_PRESENCE = 'LOCAL_PRESENCE';
export const MAX_CALL_ATTRIBUTES = 20;
export const MAX_RESULT_ATTRIBUTES = 10;
/** The attributes every call of the service carries: no task may send or record these names. */
export const OWN_ATTRIBUTES = ['tenant', 'taskId', 'contactId', 'attempt', 'signature'];
/** The contact fields every data source has, in the order they are offered. */
export const KNOWN_FIELDS = ['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164'];
/** A contact's fields that are not custom (the rest of a contact's keys are). */
const FIXED_KEYS = new Set([...KNOWN_FIELDS, 'id', 'dataSourceId', 'status', 'callCount', 'createTime', 'updateTime']);

export const VOICEMAIL_LABELS: Record<Voicemail, string> = {
  HANG_UP: 'Hang up',
  LEAVE_MESSAGE: 'Leave a message',
};

export interface Telephony {
  /** A number, LOCAL_PRESENCE, or '' for the tenant's default. */
  callerId: string;
  /** A flow's id, or '' for the tenant's default. */
  contactFlowId: string;
  callAttributes: string[];
  /** As typed (checked on submit). */
  resultAttributes: string[];
  voicemail: Voicemail;
}

export function telephonyFrom(task?: TaskView): Telephony {
  return {
    callerId: task?.callerId ?? '',
    contactFlowId: task?.contactFlowId ?? '',
    callAttributes: task?.callAttributes ?? [],
    resultAttributes: task?.resultAttributes ?? [],
    voicemail: task?.voicemail ?? 'HANG_UP',
  };
}

/**
 * The fields a call may send its flow: the known ones, then the custom fields seen on `contacts`
 * (in the order first seen), then any of `chosen` not among them (a task keeps what it named).
 * Never one of the service's own names.
 */
export function attributeChoices(contacts: Contact[], chosen: string[]): string[] {
  const names = new Set(KNOWN_FIELDS);
  for (const contact of contacts) {
    for (const key of Object.keys(contact)) if (!FIXED_KEYS.has(key)) names.add(key);
  }
  for (const name of chosen) names.add(name);
  return [...names].filter((name) => !OWN_ATTRIBUTES.includes(name));
}

/**
 * What the API would refuse in the result names, in its words (D22), or null; `sent`, the task's
 * call attributes, which a result may not repeat (D29: a result is only what the flow sets).
 */
export function resultNamesProblem(names: string[], sent: string[] = []): string | null {
  if (names.length > MAX_RESULT_ATTRIBUTES) return `resultAttributes must have at most ${MAX_RESULT_ATTRIBUTES} names`;
  const seen = new Set<string>();
  for (const [at, raw] of names.entries()) {
    const name = raw.trim();
    const field = `resultAttributes[${at}]`;
    if (!/^[A-Za-z0-9_]{1,32}$/.test(name)) return `${field} must be 1-32 letters, digits or '_'`;
    if (OWN_ATTRIBUTES.includes(name)) {
      return `${field} '${name}' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)`;
    }
    if (seen.has(name)) return `${field} '${name}' is listed twice`;
    seen.add(name);
  }
  for (const [at, raw] of names.entries()) {
    const name = raw.trim();
    const why = sent.includes(name)
      ? "is one of the task's callAttributes"
      : ['e164', 'phoneNumber'].includes(name)
        ? 'is the called number'
        : null;
    if (why) return `resultAttributes[${at}] '${name}' ${why}: a result is only what the flow sets`;
  }
  return null;
}

/** What the API would refuse in `t`, in its words, or null. */
export function telephonyProblem(t: Telephony): string | null {
  if (t.callAttributes.length > MAX_CALL_ATTRIBUTES) return `callAttributes must have at most ${MAX_CALL_ATTRIBUTES} names`;
  return resultNamesProblem(t.resultAttributes, t.callAttributes);
}

type TelephonyBody = Pick<AddTask, 'callerId' | 'contactFlowId' | 'callAttributes' | 'resultAttributes' | 'voicemail'>;

/**
 * The fields to send: a new task leaves out what is the default (unset caller ID and flow, no
 * attributes, hang up); an edit sends them all, `''` and `[]` clearing one.
 */
export function telephonyBody(t: Telephony, editing: boolean): TelephonyBody {
  const body: TelephonyBody = {};
  const results = t.resultAttributes.map((name) => name.trim());
  if (editing || t.callerId) body.callerId = t.callerId;
  if (editing || t.contactFlowId) body.contactFlowId = t.contactFlowId;
  if (editing || t.callAttributes.length) body.callAttributes = t.callAttributes;
  if (editing || results.length) body.resultAttributes = results;
  if (editing || t.voicemail !== 'HANG_UP') body.voicemail = t.voicemail;
  return body;
}

/** A caller ID as shown: "Local presence", the number, or the tenant's default (and what it is). */
export function callerIdLabel(callerId: string | null | undefined, settings?: Settings | null): string {
  if (!callerId) return `Tenant default (${settings?.defaultCallerId ?? 'not set'})`;
  return callerId === LOCAL_PRESENCE ? 'Local presence' : callerId;
}

/** A flow as shown: its name when the tenant's flows name it, else its id; or the tenant's default
 *  (and what it is). */
export function flowLabel(contactFlowId: string | null | undefined, settings?: Settings | null): string {
  const name = (id: string) => settings?.contactFlows.find((f) => f.id === id)?.name ?? id;
  if (!contactFlowId) return `Tenant default (${settings?.defaultContactFlowId ? name(settings.defaultContactFlowId) : 'not set'})`;
  return name(contactFlowId);
}
