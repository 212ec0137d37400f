// A task's schedule and filter, and a callback's time (D31), between the form's inputs and the
// API: times typed in the browser's own zone (a `datetime-local` input) go out as RFC 3339 with
// that zone's offset; filter rows go out as `{field, op, value}`.
import type { FilterCondition, FilterOp } from '../api/types';

/** The operators, in words. */
export const FILTER_OP_LABELS: Record<FilterOp, string> = {
  eq: 'is',
  ne: 'is not',
  in: 'is one of',
  prefix: 'starts with',
  exists: 'is set',
};
export const FILTER_OPS = Object.keys(FILTER_OP_LABELS) as FilterOp[];
/** The most conditions a filter holds, and values an `is one of` lists (D31). */
export const MAX_CONDITIONS = 10;
export const MAX_IN_VALUES = 100;

/** One condition as the form holds it: `value` is comma-separated for `is one of`. */
export interface FilterRow {
  field: string;
  op: FilterOp;
  value: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-12-01T15:00` in the browser's zone for an instant, as a `datetime-local` input shows it. */
export function localInput(rfc3339: string | null | undefined): string {
  if (!rfc3339) return '';
  const at = new Date(rfc3339);
  if (Number.isNaN(at.getTime())) return '';
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** A `datetime-local` value read in the browser's zone, as RFC 3339 with that zone's offset
 *  (`2026-12-01T15:00:00-05:00`); `null` for an empty or unreadable one. */
export function rfc3339(local: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(local.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi] = match.map(Number);
  const at = new Date(y, mo - 1, d, h, mi, 0, 0);
  if (Number.isNaN(at.getTime())) return null;
  const offset = -at.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return `${y}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function rowsFromFilter(conditions: FilterCondition[] | null | undefined): FilterRow[] {
  return (conditions ?? []).map((c) => ({
    field: c.field,
    op: c.op,
    value: Array.isArray(c.value) ? c.value.join(', ') : c.value == null ? '' : String(c.value),
  }));
}

/** The conditions of `rows`, or what is wrong with the first row that cannot be one. */
export function filterFromRows(rows: FilterRow[]): { conditions: FilterCondition[] } | { problem: string } {
  if (rows.length > MAX_CONDITIONS) return { problem: `A filter holds at most ${MAX_CONDITIONS} conditions.` };
  const conditions: FilterCondition[] = [];
  for (const [i, row] of rows.entries()) {
    const field = row.field.trim();
    if (!field) return { problem: `Condition ${i + 1}: name the field (phoneNumber or a contact field).` };
    if (row.op === 'exists') {
      conditions.push({ field, op: row.op });
      continue;
    }
    if (row.op === 'in') {
      const values = row.value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      if (values.length === 0 || values.length > MAX_IN_VALUES)
        return { problem: `Condition ${i + 1}: list 1 to ${MAX_IN_VALUES} values, separated by commas.` };
      conditions.push({ field, op: row.op, value: values });
      continue;
    }
    if (!row.value.trim()) return { problem: `Condition ${i + 1}: give a value.` };
    conditions.push({ field, op: row.op, value: row.value.trim() });
  }
  return { conditions };
}

/** A filter in words: `region is one of north, east and phoneNumber starts with 212`. */
export function describeFilter(conditions: FilterCondition[]): string {
  if (conditions.length === 0) return 'Every contact';
  return conditions
    .map((c) => {
      const value = Array.isArray(c.value) ? c.value.join(', ') : c.value == null ? '' : String(c.value);
      return `${c.field} ${FILTER_OP_LABELS[c.op]}${c.op === 'exists' ? '' : ` ${value}`}`;
    })
    .join(' and ');
}
