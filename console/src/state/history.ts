// A task's whole campaign as the task page charts it (GET /api/task/{id}/history): the running
// totals of its outcomes from its start to its end (or now), its pauses, its schedule and its
// daily window, mapped to SVG coordinates. Pure: the page passes the time of "now" and the zone
// the axis is read in.
import { TaskStatus, type HistoryInterval, type HistoryState, type TaskHistory } from '../api/types';

export const SERIES_KEYS = ['calls', 'successes', 'failures', 'noAnswers'] as const;
export type SeriesKey = (typeof SERIES_KEYS)[number];

export const SERIES_LABELS: Record<SeriesKey, string> = {
  calls: 'Calls',
  successes: 'Successes',
  failures: 'Failures',
  noAnswers: 'No answer',
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The outcomes of one interval, keyed as the series are. */
export function countsOf(interval: HistoryInterval): Record<SeriesKey, number> {
  return {
    calls: interval.callCount,
    successes: interval.successCount,
    failures: interval.failCount,
    noAnswers: interval.noAnswerCount,
  };
}

/** The running totals at `t` (ms since the epoch). */
export interface Point extends Record<SeriesKey, number> {
  t: number;
}

/** A span of time, ms since the epoch, `from` before `to`. */
export interface Span {
  from: number;
  to: number;
}

/** An instant of the API (RFC 3339) in ms, or null for none or an unreadable one. */
export function instant(value: string | null | undefined): number | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/**
 * What the chart spans: from the task's start (its first publish; else its first interval or
 * change of state) to its end, or `now` while it may still dial; at least `least` ms.
 */
export function campaignRange(history: TaskHistory, now: number, least = 10 * SECOND): Span {
  const firsts = [instant(history.startTime), instant(history.intervals[0]?.from), instant(history.states[0]?.time)];
  const from = firsts.find((t): t is number => t !== null) ?? now;
  const lastTo = instant(history.intervals[history.intervals.length - 1]?.to) ?? from;
  const to = Math.max(instant(history.endTime) ?? now, lastTo);
  return { from, to: Math.max(to, from + least) };
}

/**
 * The running totals over the campaign: 0 at `range.from`, each interval's outcomes spread
 * over it (the history says how many fell in it, not when), flat between intervals, and the
 * totals (the task's statistics) at `range.to`.
 */
export function runningTotals(intervals: readonly HistoryInterval[], range: Span): Point[] {
  const total: Record<SeriesKey, number> = { calls: 0, successes: 0, failures: 0, noAnswers: 0 };
  const points: Point[] = [{ t: range.from, ...total }];
  const push = (t: number) => {
    const last = points[points.length - 1];
    const same = last.t === t && SERIES_KEYS.every((k) => last[k] === total[k]);
    if (!same) points.push({ t: Math.max(t, last.t), ...total });
  };
  for (const interval of intervals) {
    const from = instant(interval.from);
    const to = instant(interval.to);
    if (from === null || to === null) continue;
    push(from);
    const counts = countsOf(interval);
    for (const k of SERIES_KEYS) total[k] += counts[k];
    push(to);
  }
  push(range.to);
  return points;
}

/** The task's pauses: from each PAUSED state to the next change of state (or `until`, while paused). */
export function pauseSpans(states: readonly HistoryState[], until: number): Span[] {
  const spans: Span[] = [];
  states.forEach((state, i) => {
    if (state.status !== TaskStatus.PAUSED) return;
    const from = instant(state.time);
    if (from === null) return;
    const next = instant(states[i + 1]?.time) ?? until;
    if (next > from) spans.push({ from, to: next });
  });
  return spans;
}

// Time zones. A zone is an IANA name, or a fixed offset from UTC in minutes.
export type Zone = string | number;

const formats = new Map<string, Intl.DateTimeFormat>();

/** The offset of `zone` from UTC at `t`, in ms (east positive). */
export function zoneOffset(zone: Zone, t: number): number {
  if (typeof zone === 'number') return zone * MINUTE;
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(t))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour % 24, parts.minute, parts.second);
  return wall - (t - (((t % 1000) + 1000) % 1000));
}

/** Whether `zone` is an IANA name this browser knows. */
export function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time of `t` in `zone`, as ms since the epoch read as if UTC. */
export function wallClock(t: number, zone: Zone): number {
  return t + zoneOffset(zone, t);
}

/** The instant at wall-clock time `wall` (ms, read as if UTC) in `zone`; in a daylight-saving
 *  gap, the instant an hour later. */
export function fromWallClock(wall: number, zone: Zone): number {
  const guess = wall - zoneOffset(zone, wall);
  return wall - zoneOffset(zone, guess);
}

/** `HH:MM` as minutes of the day, or null. */
export function minutesOfDay(hhmm: string | null | undefined): number | null {
  const match = /^(\d{1,2}):(\d{2})$/.exec(hhmm?.trim() ?? '');
  if (!match) return null;
  const minutes = Number(match[1]) * 60 + Number(match[2]);
  return minutes < 24 * 60 ? minutes : null;
}

/**
 * When the daily window `start`–`end` (`HH:MM`, both minutes included as the engine reads it,
 * D13) is open in `zone` within `range`: one span a day, cut to the range. None when the
 * window is not a readable `start` before `end`, or the range is longer than `maxDays`.
 */
export function windowSpans(range: Span, start: string, end: string, zone: Zone, maxDays = 400): Span[] {
  const open = minutesOfDay(start);
  const close = minutesOfDay(end);
  if (open === null || close === null || close < open) return [];
  const firstDay = Math.floor(wallClock(range.from, zone) / DAY) - 1;
  const lastDay = Math.floor(wallClock(range.to, zone) / DAY);
  if (lastDay - firstDay > maxDays) return [];
  const spans: Span[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const from = Math.max(range.from, fromWallClock(day * DAY + open * MINUTE, zone));
    const to = Math.min(range.to, fromWallClock(day * DAY + (close + 1) * MINUTE, zone));
    if (to > from) spans.push({ from, to });
  }
  return spans;
}

/**
 * The service's zone as a fixed offset (minutes), read from one instant the task detail gives
 * in it (`YYYY-MM-DD HH:MM:SS`, D4) and the history gives in UTC (RFC 3339): the nearest
 * quarter hour; null when either is missing.
 */
export function serviceOffset(shown: string | null | undefined, utc: string | null | undefined): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(shown ?? '');
  const at = instant(utc);
  if (!match || at === null) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  return Math.round((wall - at) / (15 * MINUTE)) * 15;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** `t` in `zone` as `HH:MM`, or `HH:MM:SS` with `seconds`. */
export function clockLabel(t: number, zone: Zone, seconds = false): string {
  const wall = new Date(wallClock(t, zone));
  return `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}${seconds ? `:${pad(wall.getUTCSeconds())}` : ''}`;
}

/** `t` in `zone` as `30 Nov`. */
export function dateLabel(t: number, zone: Zone): string {
  const wall = new Date(wallClock(t, zone));
  return `${wall.getUTCDate()} ${MONTHS[wall.getUTCMonth()]}`;
}

/** `t` in `zone` as `30 Nov 14:05`. */
export function dateTimeLabel(t: number, zone: Zone): string {
  return `${dateLabel(t, zone)} ${clockLabel(t, zone)}`;
}

/** A span in `zone`: `30 Nov 12:03–12:10`, the second date only when it differs, seconds for
 *  a span of under two minutes; `to` null: `…–now`. */
export function spanLabel(from: number, to: number | null, zone: Zone): string {
  const seconds = to !== null && to - from < 2 * MINUTE;
  const start = `${dateLabel(from, zone)} ${clockLabel(from, zone, seconds)}`;
  if (to === null) return `${start}–now`;
  const end = dateLabel(to, zone) === dateLabel(from, zone) ? clockLabel(to, zone, seconds) : `${dateLabel(to, zone)} ${clockLabel(to, zone, seconds)}`;
  return `${start}–${end}`;
}

/** The steps the time axis is labelled at, shortest first. */
const TICK_STEPS = [1, 2, 5, 10, 15, 30]
  .map((s) => s * SECOND)
  .concat([1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720].map((m) => m * MINUTE)).concat([1, 2, 7, 14, 28].map((d) => d * DAY));

/**
 * Labelled instants of the time axis over `range`, at most `most`, on round wall-clock times in
 * `zone`: clock times (with the date at the first and wherever the day changes; with seconds
 * for a range of seconds) for a range of hours, dates for one of days.
 */
export function timeTicks(range: Span, zone: Zone, most = 6): { t: number; label: string }[] {
  const span = range.to - range.from;
  const step = TICK_STEPS.find((s) => span / s <= most) ?? Math.ceil(span / most / DAY) * DAY;
  const ticks: { t: number; label: string }[] = [];
  let lastDate = '';
  for (let wall = Math.ceil(wallClock(range.from, zone) / step) * step; ; wall += step) {
    const t = fromWallClock(wall, zone);
    if (t > range.to) break;
    if (t < range.from) continue;
    const date = dateLabel(t, zone);
    const clock = clockLabel(t, zone, step < MINUTE);
    const label = step >= DAY ? date : date !== lastDate ? `${date} ${clock}` : clock;
    ticks.push({ t, label });
    lastDate = date;
  }
  return ticks;
}

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least 1. */
export function niceMax(value: number): number {
  if (!Number.isFinite(value) || value <= 1) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

export interface ChartBox {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** What is marked on the chart besides the outcomes. */
export interface Marks {
  /** The daily window's open spans, when it is read in one zone. */
  windows: Span[];
  pauses: Span[];
  /** The schedule's start (`startAt`) and stop (`endAt`), when set. */
  startAt: number | null;
  endAt: number | null;
}

export interface HistoryGeometry {
  range: Span;
  yMax: number;
  yTicks: { value: number; y: number }[];
  xTicks: { label: string; x: number }[];
  lines: { key: SeriesKey; points: string }[];
  /** Bands across the plot, x and width. */
  windows: { x: number; width: number }[];
  pauses: { x: number; width: number; from: number; to: number }[];
  /** Schedule lines inside the range. */
  schedule: { key: 'startAt' | 'endAt'; x: number; t: number }[];
}

/** Maps the campaign to SVG coordinates inside `box` (y grows downwards); times labelled in `zone`. */
export function historyGeometry(points: readonly Point[], range: Span, marks: Marks, box: ChartBox, zone: Zone): HistoryGeometry {
  const plotW = box.width - box.left - box.right;
  const plotH = box.height - box.top - box.bottom;
  const span = Math.max(1, range.to - range.from);
  let maxValue = 0;
  for (const p of points) for (const k of SERIES_KEYS) maxValue = Math.max(maxValue, p[k]);
  const yMax = niceMax(maxValue);
  const round = (n: number) => Math.round(n * 10) / 10;
  const clip = (t: number) => Math.min(range.to, Math.max(range.from, t));
  const xOf = (t: number) => round(box.left + ((clip(t) - range.from) / span) * plotW);
  const yOf = (v: number) => round(box.top + plotH - (v / yMax) * plotH);
  const band = (s: Span) => ({ x: xOf(s.from), width: round(Math.max(0, xOf(s.to) - xOf(s.from))) });
  const inside = (s: Span) => s.to > range.from && s.from < range.to;
  const lines = SERIES_KEYS.map((key) => ({ key, points: points.map((p) => `${xOf(p.t)},${yOf(p[key])}`).join(' ') }));
  const yTicks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => yMax * f)
    .filter((v, i, all) => Number.isInteger(v) && all.indexOf(v) === i)
    .map((value) => ({ value, y: yOf(value) }));
  const xTicks = timeTicks(range, zone).map((tick) => ({ label: tick.label, x: xOf(tick.t) }));
  const schedule = (['startAt', 'endAt'] as const)
    .map((key) => ({ key, t: marks[key] }))
    .filter((m): m is { key: 'startAt' | 'endAt'; t: number } => m.t !== null && m.t >= range.from && m.t <= range.to)
    .map((m) => ({ ...m, x: xOf(m.t) }));
  return {
    range,
    yMax,
    yTicks,
    xTicks,
    lines,
    windows: marks.windows.filter(inside).map(band),
    pauses: marks.pauses.filter(inside).map((s) => ({ ...band(s), from: s.from, to: s.to })),
    schedule,
  };
}

/** Where the chart can show a task's daily window (D13, D15). */
export type WindowShown =
  | { kind: 'none' } // no window: it may call at any hour
  | { kind: 'perContact'; start: string; end: string } // read in each contact's own zone: not one band
  | { kind: 'unknownZone'; start: string; end: string } // the service's zone, which nothing here tells
  | { kind: 'zone'; start: string; end: string; zone: Zone; zoneName: string };

/** Signed `UTC+05:30` of an offset in minutes. */
export function offsetName(minutes: number): string {
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? '−' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * How `task`'s daily window can be shown: read in the task's zone (its `timeZone`, else the
 * service's, whose offset the task's start gives: its detail shows it in that zone, the history
 * in UTC), or in each contact's.
 */
export function windowShown(
  task: { dailyStartTime?: string | null; dailyEndTime?: string | null; timeZone?: string | null; windowTimeZone: string; startTime?: string | null },
  history: Pick<TaskHistory, 'startTime'> | null,
): WindowShown {
  const start = task.dailyStartTime;
  const end = task.dailyEndTime;
  if (!start || !end) return { kind: 'none' };
  if (task.windowTimeZone !== 'TASK') return { kind: 'perContact', start, end };
  if (task.timeZone && knownZone(task.timeZone)) return { kind: 'zone', start, end, zone: task.timeZone, zoneName: task.timeZone };
  if (task.timeZone) return { kind: 'unknownZone', start, end };
  const offset = serviceOffset(task.startTime, history?.startTime);
  if (offset === null) return { kind: 'unknownZone', start, end };
  return { kind: 'zone', start, end, zone: offset, zoneName: `the service’s time zone (${offsetName(offset)})` };
}

/**
 * A task's outcomes and state in one string: the statistics' totals and status, or the sum of a
 * history's intervals and its status. The task page reads the history again when its key
 * differs from the statistics'.
 */
export function outcomeKey(
  of: Pick<TaskHistory, 'status' | 'intervals'> | { status: number; callCount: number; successCount: number; failCount: number; noAnswerCount: number },
): string {
  const sums =
    'intervals' in of
      ? of.intervals.reduce(
          (sum, i) => [sum[0] + i.callCount, sum[1] + i.successCount, sum[2] + i.failCount, sum[3] + i.noAnswerCount],
          [0, 0, 0, 0],
        )
      : [of.callCount, of.successCount, of.failCount, of.noAnswerCount];
  return `${of.status}:${sums.join(',')}`;
}
