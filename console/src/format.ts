// Display formatting shared by the pages.
import { ContactStatus, TaskStatus } from './api/types';

/** The codes of an integer-coded enum of the contract, in order: its object also maps each code
 *  back to its name, and those entries are left out. */
function codesOf<E extends number>(enumObject: Record<string, string | E>): E[] {
  return Object.values(enumObject).filter((v): v is E => typeof v === 'number');
}

/** Every task status code (D10), in order. */
export const TASK_STATUSES: readonly TaskStatus[] = codesOf<TaskStatus>(TaskStatus);

/** The name of a task status code (D10), or `UNKNOWN (n)`. */
export function statusName(status: number | null | undefined): string {
  if (status === null || status === undefined) return 'UNKNOWN';
  return (TaskStatus[status] as string | undefined) ?? `UNKNOWN (${status})`;
}

/** The states in which nothing moves on its own any more. */
const FINAL_STATUSES: ReadonlySet<number> = new Set([TaskStatus.STOPPED, TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CLOSED]);

/** A task is in a final state when nothing moves on its own any more. */
export function isFinalStatus(status: number): boolean {
  return FINAL_STATUSES.has(status);
}

/** A fraction (0.1234) as a percentage ("12.3%"); rates are fractions (D9). */
export function percent(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return '—';
  const value = fraction * 100;
  const rounded = Number(value.toFixed(digits));
  return `${rounded.toFixed(digits).replace(/\.0+$/, '')}%`;
}

/** Seconds as "1 h 2 min 3 s" (durations are seconds, D9). */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  let s = Math.max(0, Math.round(seconds));
  if (s === 0) return '0 s';
  const parts: string[] = [];
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) parts.push(`${d} d`);
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s) parts.push(`${s} s`);
  return parts.join(' ');
}

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return n.toLocaleString('en-US');
}

/** A timestamp as sent (`YYYY-MM-DD HH:MM:SS`), or a dash for none. */
export function time(value: string | null | undefined): string {
  return value ? value : '—';
}

/** Contact status (D7), in words: `NO_ANSWER` as "No answer". */
export function contactStatusName(status: number): string {
  const name = ContactStatus[status] as string | undefined;
  return name === undefined ? `Unknown (${status})` : humanize(name);
}

/** Turns an enum constant into words: "NO_ANSWER" -> "No answer". */
export function humanize(constant: string): string {
  const words = constant.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The file name in a Content-Disposition header, if any. */
export function fileNameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''));
    } catch {
      /* fall through */
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(header);
  return plain ? plain[1].trim() : null;
}
