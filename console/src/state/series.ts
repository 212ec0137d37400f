// The statistics samples a task page takes (kept in memory), and the chart geometry.
import type { TaskStat } from '../api/types';

export interface Sample {
  t: number; // ms since epoch, when the page took it
  calls: number;
  successes: number;
  failures: number;
  noAnswers: number;
}

export const SERIES_KEYS = ['calls', 'successes', 'failures', 'noAnswers'] as const;
export type SeriesKey = (typeof SERIES_KEYS)[number];

export const SERIES_LABELS: Record<SeriesKey, string> = {
  calls: 'Calls',
  successes: 'Successes',
  failures: 'Failures',
  noAnswers: 'No answer',
};

export const MAX_SAMPLES = 400;

export function sampleFrom(stat: Pick<TaskStat, 'callCount' | 'successCount' | 'failCount' | 'noAnswerCount'>, t: number): Sample {
  return {
    t,
    calls: stat.callCount,
    successes: stat.successCount,
    failures: stat.failCount,
    noAnswers: stat.noAnswerCount,
  };
}

function sameValues(a: Sample, b: Sample): boolean {
  return a.calls === b.calls && a.successes === b.successes && a.failures === b.failures && a.noAnswers === b.noAnswers;
}

/**
 * Appends a sample. A run of identical values is kept as its first and last sample only (the
 * last one's time moves forward), so a quiet task does not fill memory; samples out of time
 * order are dropped; at most `max` samples are kept (oldest dropped).
 */
export function addSample(series: readonly Sample[], sample: Sample, max = MAX_SAMPLES): Sample[] {
  const last = series[series.length - 1];
  if (last && sample.t < last.t) return series.slice();
  if (last && sample.t === last.t) return [...series.slice(0, -1), sample];
  const prev = series[series.length - 2];
  let next: Sample[];
  if (last && prev && sameValues(last, sample) && sameValues(prev, last)) {
    next = [...series.slice(0, -1), sample];
  } else {
    next = [...series, sample];
  }
  return next.length > max ? next.slice(next.length - max) : next;
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

export interface ChartGeometry {
  yMax: number;
  yTicks: { value: number; y: number }[];
  xTicks: { label: string; x: number }[];
  lines: { key: SeriesKey; points: string }[];
  t0: number;
  t1: number;
}

/** Seconds since the first sample, for the x-axis labels. */
export function elapsedLabel(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest ? `${m}m${rest}s` : `${m}m`;
}

/** Maps samples to SVG coordinates inside `box` (y grows downwards). */
export function chartGeometry(series: readonly Sample[], box: ChartBox): ChartGeometry {
  const plotW = box.width - box.left - box.right;
  const plotH = box.height - box.top - box.bottom;
  const t0 = series.length ? series[0].t : 0;
  const t1 = series.length ? series[series.length - 1].t : 0;
  const span = Math.max(1, t1 - t0);
  let maxValue = 0;
  for (const s of series) for (const k of SERIES_KEYS) maxValue = Math.max(maxValue, s[k]);
  const yMax = niceMax(maxValue);
  const xOf = (t: number) => box.left + (series.length > 1 ? ((t - t0) / span) * plotW : plotW / 2);
  const yOf = (v: number) => box.top + plotH - (v / yMax) * plotH;
  const round = (n: number) => Math.round(n * 10) / 10;
  const lines = SERIES_KEYS.map((key) => ({
    key,
    points: series.map((s) => `${round(xOf(s.t))},${round(yOf(s[key]))}`).join(' '),
  }));
  const yTicks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => yMax * f)
    .filter((v, i, all) => Number.isInteger(v) && all.indexOf(v) === i)
    .map((value) => ({ value, y: round(yOf(value)) }));
  const xTicks =
    series.length > 1
      ? [0, 0.5, 1].map((f) => ({ label: elapsedLabel(span * f), x: round(box.left + plotW * f) }))
      : series.length === 1
        ? [{ label: '0s', x: round(xOf(t0)) }]
        : [];
  return { yMax, yTicks, xTicks, lines, t0, t1 };
}
