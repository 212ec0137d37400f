import { describe, expect, it } from 'vitest';
import { addSample, chartGeometry, elapsedLabel, MAX_SAMPLES, niceMax, sampleFrom, type Sample } from '../src/state/series';

const s = (t: number, calls: number, successes = 0, failures = 0, noAnswers = 0): Sample => ({ t, calls, successes, failures, noAnswers });

describe('sampling', () => {
  it('maps a stat record to a sample', () => {
    expect(sampleFrom({ callCount: 5, successCount: 3, failCount: 1, noAnswerCount: 1 }, 42)).toEqual(s(42, 5, 3, 1, 1));
  });

  it('appends changing samples', () => {
    let series: Sample[] = [];
    series = addSample(series, s(0, 0));
    series = addSample(series, s(3000, 2));
    series = addSample(series, s(6000, 4));
    expect(series.map((x) => x.calls)).toEqual([0, 2, 4]);
  });

  it('keeps a run of identical values as its first and last sample', () => {
    let series: Sample[] = [];
    for (let i = 0; i < 10; i++) series = addSample(series, s(i * 1000, 7));
    expect(series).toEqual([s(0, 7), s(9000, 7)]);
    series = addSample(series, s(10000, 8));
    expect(series.map((x) => x.t)).toEqual([0, 9000, 10000]);
  });

  it('drops out-of-order samples and replaces one at the same time', () => {
    const series = [s(1000, 1), s(2000, 2)];
    expect(addSample(series, s(1500, 9))).toEqual(series);
    expect(addSample(series, s(2000, 3))).toEqual([s(1000, 1), s(2000, 3)]);
  });

  it('keeps at most MAX_SAMPLES', () => {
    let series: Sample[] = [];
    for (let i = 0; i < MAX_SAMPLES + 50; i++) series = addSample(series, s(i, i));
    expect(series).toHaveLength(MAX_SAMPLES);
    expect(series[0].calls).toBe(50);
  });
});

describe('chart scaling', () => {
  const box = { width: 200, height: 120, left: 20, right: 0, top: 0, bottom: 20 };

  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(1)).toBe(1);
    expect(niceMax(3)).toBe(5);
    expect(niceMax(8)).toBe(10);
    expect(niceMax(11)).toBe(20);
    expect(niceMax(120)).toBe(200);
    expect(niceMax(5000)).toBe(5000);
  });

  it('maps the first and last samples to the plot edges', () => {
    const g = chartGeometry([s(0, 0), s(10000, 10, 5)], box);
    expect(g.yMax).toBe(10);
    const calls = g.lines.find((l) => l.key === 'calls')!;
    expect(calls.points).toBe('20,100 200,0');
    const successes = g.lines.find((l) => l.key === 'successes')!;
    expect(successes.points).toBe('20,100 200,50');
    expect(g.xTicks.map((t) => t.label)).toEqual(['0s', '5s', '10s']);
    expect(g.yTicks.map((t) => t.value)).toEqual([0, 5, 10]);
    expect(g.yTicks[0].y).toBe(100);
  });

  it('handles no sample and one sample', () => {
    expect(chartGeometry([], box).lines.every((l) => l.points === '')).toBe(true);
    const one = chartGeometry([s(5, 3)], box);
    expect(one.lines[0].points).toBe('110,40');
  });

  it('labels elapsed time', () => {
    expect(elapsedLabel(0)).toBe('0s');
    expect(elapsedLabel(90_000)).toBe('1m30s');
    expect(elapsedLabel(120_000)).toBe('2m');
  });
});
