// Settings form values -> the body of POST /api/settings/update with only changed fields (D14).
import type { Settings, UpdateSettings } from '../api/types';

export interface SettingsForm {
  defaultCountry: string;
  hoursStart: string;
  hoursEnd: string;
  maxCalls: string;
  periodHours: string;
  /** One of the tenant's caller IDs, or '' for none (D22). */
  defaultCallerId: string;
  /** One of the tenant's flows, or '' for none (D22). */
  defaultContactFlowId: string;
}

export function formFromSettings(s: Settings): SettingsForm {
  return {
    defaultCountry: s.defaultCountry ?? '',
    hoursStart: s.callingHours?.start ?? '',
    hoursEnd: s.callingHours?.end ?? '',
    maxCalls: s.frequencyCap ? String(s.frequencyCap.maxCalls) : '',
    periodHours: s.frequencyCap ? String(s.frequencyCap.periodHours) : '',
    defaultCallerId: s.defaultCallerId ?? '',
    defaultContactFlowId: s.defaultContactFlowId ?? '',
  };
}

/** The changed fields (`null` clears one), or an error sentence. */
export function settingsUpdate(original: Settings, f: SettingsForm): { body: UpdateSettings } | { error: string } {
  const body: UpdateSettings = {};
  const country = f.defaultCountry.trim().toUpperCase();
  if (country && !/^[A-Z]{2}$/.test(country)) return { error: 'Default country must be two letters (ISO 3166 alpha-2), e.g. US.' };
  if ((country || null) !== (original.defaultCountry ?? null)) body.defaultCountry = country || null;

  const start = f.hoursStart.slice(0, 5);
  const end = f.hoursEnd.slice(0, 5);
  if (!!start !== !!end) return { error: 'Give both a start and an end for the calling hours, or neither.' };
  const hours = start ? { start, end } : null;
  const oldHours = original.callingHours ? { start: original.callingHours.start, end: original.callingHours.end } : null;
  if (JSON.stringify(hours) !== JSON.stringify(oldHours)) body.callingHours = hours;

  const max = f.maxCalls.trim();
  const period = f.periodHours.trim();
  if (!!max !== !!period) return { error: 'Give both the maximum calls and the period of the frequency cap, or neither.' };
  const cap = max ? { maxCalls: Number(max), periodHours: Number(period) } : null;
  const oldCap = original.frequencyCap ? { maxCalls: original.frequencyCap.maxCalls, periodHours: original.frequencyCap.periodHours } : null;
  if (JSON.stringify(cap) !== JSON.stringify(oldCap)) body.frequencyCap = cap;

  if ((f.defaultCallerId || null) !== (original.defaultCallerId ?? null)) body.defaultCallerId = f.defaultCallerId || null;
  if ((f.defaultContactFlowId || null) !== (original.defaultContactFlowId ?? null)) {
    body.defaultContactFlowId = f.defaultContactFlowId || null;
  }
  return { body };
}
