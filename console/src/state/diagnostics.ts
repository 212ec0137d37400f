// Diagnostics (D19) in plain words.
import type { Blocked, Diagnostics } from '../api/types';
import { humanize, statusName } from '../format';

export const BLOCKED_SENTENCES: Record<Blocked, string> = {
  NOT_RUNNING: 'It is not running: only a RUNNING task dials.',
  NOT_STARTED: 'Its schedule has not started: it places its first call at its start time.',
  OUTSIDE_WINDOW: "No contact's calling window is open right now; dialling resumes when one opens.",
  ALL_WAITING:
    'Every remaining contact is waiting: for its retry interval, the frequency cap or its calling window.',
  NO_AGENTS:
    'No agent of its queue is free to take an answered call (or about to be); dialling resumes as agents become free.',
  CAPACITY: 'The calls in flight are at their limit (for this task or the whole service); more start as these end.',
  PROVIDER_BUSY: 'The telephony provider is refusing calls for rate or capacity for now; it will be tried again.',
  NOTHING_LEFT: 'Nothing is left to dial: every contact has a final outcome.',
};

export const DIALLING_NOW = 'It is dialling now.';

/** One sentence for a `blockedBy` value; null means calls are being placed. */
export function blockedSentence(blockedBy: Blocked | null | undefined, status?: number): string {
  if (blockedBy === null || blockedBy === undefined) return DIALLING_NOW;
  if (blockedBy === 'NOT_RUNNING' && status !== undefined) {
    return `It is not running (it is ${statusName(status)}): only a RUNNING task dials.`;
  }
  return BLOCKED_SENTENCES[blockedBy] ?? `It is blocked (${humanize(blockedBy)}).`;
}

export const SKIP_WORDS: Record<keyof Diagnostics['skips'], string> = {
  DNC: 'on the do-not-call list',
  INVALID_NUMBER: 'with an invalid number',
  OUTSIDE_WINDOW: 'outside their calling window',
  CALLING_HOURS: "outside the tenant's calling hours",
  FREQUENCY_CAP: 'over the frequency cap',
  NO_COMMON_WINDOW: 'as their zones never share an open minute of the window',
  ATTRIBUTES_TOO_LARGE: 'as the fields sent to their call are too large for the provider',
  FILTERED: "as the task's filter leaves them out",
};

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** The contacts partition as a sentence. */
export function partitionSentence(c: Diagnostics['contacts']): string {
  return (
    `Of ${plural(c.total, 'contact', 'contacts')}: ${c.notDialled.toLocaleString('en-US')} not dialled yet, ` +
    `${c.waiting.toLocaleString('en-US')} waiting, ${c.inFlight.toLocaleString('en-US')} in flight, ` +
    `${c.final.toLocaleString('en-US')} final.`
  );
}

/** One sentence per non-zero skip, e.g. "2 contacts skipped: on the do-not-call list." */
export function skipSentences(skips: Diagnostics['skips']): string[] {
  return (Object.keys(SKIP_WORDS) as (keyof Diagnostics['skips'])[])
    .filter((k) => (skips[k] ?? 0) > 0)
    .map((k) => `${plural(skips[k], 'contact', 'contacts')} skipped ${SKIP_WORDS[k]}.`);
}
