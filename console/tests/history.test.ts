import { describe, expect, it } from 'vitest';
import { TaskStatus, type TaskHistory } from '../src/api/types';
import {
  campaignRange,
  dateTimeLabel,
  fromWallClock,
  historyGeometry,
  niceMax,
  outcomeKey,
  pauseSpans,
  runningTotals,
  serviceOffset,
  spanLabel,
  timeTicks,
  wallClock,
  windowShown,
  windowSpans,
  zoneOffset,
} from '../src/state/history';
import { interval } from './support/history';

const T = (iso: string) => Date.parse(iso);
const history = (over: Partial<TaskHistory> = {}): TaskHistory => ({
  taskId: '01JTASK',
  status: TaskStatus.RUNNING,
  startTime: '2026-11-28T09:00:00Z',
  endTime: null,
  intervals: [],
  states: [],
  ...over,
});

describe('the campaign’s range', () => {
  it('runs from the start to the end, or to now while it may dial', () => {
    const now = T('2026-11-30T12:00:00Z');
    expect(campaignRange(history(), now)).toEqual({ from: T('2026-11-28T09:00:00Z'), to: now });
    expect(campaignRange(history({ endTime: '2026-11-29T17:00:00Z' }), now)).toEqual({ from: T('2026-11-28T09:00:00Z'), to: T('2026-11-29T17:00:00Z') });
  });

  it('starts at the first interval without a start, and lasts ten seconds at least', () => {
    const now = T('2026-11-30T12:00:00Z');
    const h = history({ startTime: null, intervals: [interval('2026-11-30T11:59:50Z', '2026-11-30T11:59:55Z', 1)] });
    expect(campaignRange(h, now)).toEqual({ from: T('2026-11-30T11:59:50Z'), to: now });
    const brief = history({ startTime: '2026-11-30T11:59:50Z', endTime: '2026-11-30T11:59:53Z' });
    expect(campaignRange(brief, now)).toEqual({ from: T('2026-11-30T11:59:50Z'), to: now });
    expect(campaignRange(history({ startTime: null }), now)).toEqual({ from: now, to: now + 10_000 });
  });
});

describe('running totals', () => {
  it('rise over each interval, stay flat between them, and end at the sums', () => {
    const range = { from: T('2026-11-30T09:00:00Z'), to: T('2026-11-30T12:00:00Z') };
    const points = runningTotals(
      [
        // An hour's interval and two minutes' later: exact counts whatever their length.
        interval('2026-11-30T09:00:00Z', '2026-11-30T10:00:00Z', 60, 30, 20, 10),
        interval('2026-11-30T11:00:00Z', '2026-11-30T11:01:00Z', 2, 2),
        interval('2026-11-30T11:01:00Z', '2026-11-30T11:02:00Z', 3, 1, 1, 1),
      ],
      range,
    );
    expect(points.map((p) => [new Date(p.t).toISOString().slice(11, 16), p.calls, p.successes, p.failures, p.noAnswers])).toEqual([
      ['09:00', 0, 0, 0, 0],
      ['10:00', 60, 30, 20, 10],
      ['11:00', 60, 30, 20, 10],
      ['11:01', 62, 32, 20, 10],
      ['11:02', 65, 33, 21, 11],
      ['12:00', 65, 33, 21, 11],
    ]);
  });

  it('is flat at zero without calls', () => {
    const range = { from: 0, to: 60_000 };
    expect(runningTotals([], range)).toEqual([
      { t: 0, calls: 0, successes: 0, failures: 0, noAnswers: 0 },
      { t: 60_000, calls: 0, successes: 0, failures: 0, noAnswers: 0 },
    ]);
  });
});

describe('pauses', () => {
  it('span from each PAUSED to the next change, the last one to now', () => {
    const states = [
      { time: '2026-11-30T09:00:00Z', status: TaskStatus.RUNNING },
      { time: '2026-11-30T10:00:00Z', status: TaskStatus.PAUSED },
      { time: '2026-11-30T10:30:00Z', status: TaskStatus.RUNNING },
      { time: '2026-11-30T11:00:00Z', status: TaskStatus.PAUSED },
    ];
    const now = T('2026-11-30T11:20:00Z');
    expect(pauseSpans(states, now)).toEqual([
      { from: T('2026-11-30T10:00:00Z'), to: T('2026-11-30T10:30:00Z') },
      { from: T('2026-11-30T11:00:00Z'), to: now },
    ]);
    expect(pauseSpans([{ time: '2026-11-30T09:00:00Z', status: TaskStatus.RUNNING }], now)).toEqual([]);
  });
});

describe('time zones', () => {
  it('reads a zone’s offset, daylight saving included', () => {
    expect(zoneOffset('UTC', T('2026-07-01T00:00:00Z'))).toBe(0);
    expect(zoneOffset('Europe/Paris', T('2026-07-01T00:00:00Z'))).toBe(2 * 3_600_000);
    expect(zoneOffset('Europe/Paris', T('2026-12-01T00:00:00Z'))).toBe(3_600_000);
    expect(zoneOffset(-300, 0)).toBe(-5 * 3_600_000);
    expect(wallClock(T('2026-12-01T08:00:00Z'), 'Asia/Kolkata')).toBe(T('2026-12-01T13:30:00Z'));
    expect(fromWallClock(T('2026-12-01T13:30:00Z'), 'Asia/Kolkata')).toBe(T('2026-12-01T08:00:00Z'));
  });

  it('infers the service’s offset from one instant shown in it and in UTC', () => {
    expect(serviceOffset('2026-11-30 13:00:05', '2026-11-30T12:00:04.900Z')).toBe(60);
    expect(serviceOffset('2026-11-30 06:30:00', '2026-11-30T12:00:00Z')).toBe(-330);
    expect(serviceOffset(null, '2026-11-30T12:00:00Z')).toBeNull();
  });
});

describe('the daily window', () => {
  it('is open from its start to the end of its last minute each day, in its zone', () => {
    const range = { from: T('2026-11-30T10:00:00Z'), to: T('2026-12-02T12:00:00Z') };
    expect(windowSpans(range, '09:00', '17:59', 'Europe/Paris')).toEqual([
      { from: T('2026-11-30T10:00:00Z'), to: T('2026-11-30T17:00:00Z') },
      { from: T('2026-12-01T08:00:00Z'), to: T('2026-12-01T17:00:00Z') },
      { from: T('2026-12-02T08:00:00Z'), to: T('2026-12-02T12:00:00Z') },
    ]);
    // A fixed offset (the service's zone); none while it does not open in the range.
    expect(windowSpans({ from: T('2026-11-30T00:00:00Z'), to: T('2026-11-30T06:00:00Z') }, '08:00', '09:00', -300)).toEqual([]);
    expect(windowSpans({ from: T('2026-11-30T00:00:00Z'), to: T('2026-11-30T23:00:00Z') }, '08:00', '08:59', -300)).toEqual([
      { from: T('2026-11-30T13:00:00Z'), to: T('2026-11-30T14:00:00Z') },
    ]);
    expect(windowSpans(range, '18:00', '09:00', 'UTC')).toEqual([]);
  });

  it('is shaded only when read in the task’s zone', () => {
    const task = { dailyStartTime: '09:00', dailyEndTime: '17:00', timeZone: 'Europe/Paris', windowTimeZone: 'TASK', startTime: '2026-11-30 09:00:00' };
    expect(windowShown(task, null)).toMatchObject({ kind: 'zone', zone: 'Europe/Paris', zoneName: 'Europe/Paris' });
    expect(windowShown({ ...task, windowTimeZone: 'CALLED_PARTY' }, null)).toEqual({ kind: 'perContact', start: '09:00', end: '17:00' });
    expect(windowShown({ ...task, dailyStartTime: null, dailyEndTime: null }, null)).toEqual({ kind: 'none' });
    // No zone of its own: the service's, as far as its start tells.
    expect(windowShown({ ...task, timeZone: null }, { startTime: '2026-11-30T08:00:00Z' })).toMatchObject({
      kind: 'zone',
      zone: 60,
      zoneName: 'the service’s time zone (UTC+01:00)',
    });
    expect(windowShown({ ...task, timeZone: null }, null)).toMatchObject({ kind: 'unknownZone' });
    expect(windowShown({ ...task, timeZone: 'Not/AZone' }, null)).toMatchObject({ kind: 'unknownZone' });
  });
});

describe('the time axis', () => {
  it('labels clock times, with the date where the day changes', () => {
    const ticks = timeTicks({ from: T('2026-11-30T21:10:00Z'), to: T('2026-12-01T02:50:00Z') }, 'UTC');
    expect(ticks.map((t) => t.label)).toEqual(['30 Nov 22:00', '23:00', '1 Dec 00:00', '01:00', '02:00']);
  });

  it('labels dates over days, and minutes over a short run', () => {
    expect(timeTicks({ from: T('2026-11-28T09:00:00Z'), to: T('2026-11-30T12:00:00Z') }, 'UTC').map((t) => t.label)).toEqual([
      '28 Nov 12:00',
      '29 Nov 00:00',
      '12:00',
      '30 Nov 00:00',
      '12:00',
    ]);
    expect(timeTicks({ from: T('2026-11-01T00:00:00Z'), to: T('2026-11-30T00:00:00Z') }, 'UTC').map((t) => t.label)).toEqual([
      '5 Nov',
      '12 Nov',
      '19 Nov',
      '26 Nov',
    ]);
    expect(timeTicks({ from: T('2026-11-30T12:00:10Z'), to: T('2026-11-30T12:04:00Z') }, 'UTC').map((t) => t.label)).toEqual([
      '30 Nov 12:01',
      '12:02',
      '12:03',
      '12:04',
    ]);
  });

  it('labels seconds over a run of seconds', () => {
    expect(timeTicks({ from: T('2026-11-30T12:27:09Z'), to: T('2026-11-30T12:27:19Z') }, 'UTC').map((t) => t.label)).toEqual([
      '30 Nov 12:27:10',
      '12:27:12',
      '12:27:14',
      '12:27:16',
      '12:27:18',
    ]);
  });

  it('labels a span, the second date only when it differs', () => {
    expect(spanLabel(T('2026-11-30T12:03:00Z'), T('2026-11-30T12:10:00Z'), 'UTC')).toBe('30 Nov 12:03–12:10');
    expect(spanLabel(T('2026-11-30T12:03:05Z'), T('2026-11-30T12:03:09Z'), 'UTC')).toBe('30 Nov 12:03:05–12:03:09');
    expect(spanLabel(T('2026-11-30T22:00:00Z'), T('2026-12-01T01:00:00Z'), 'UTC')).toBe('30 Nov 22:00–1 Dec 01:00');
    expect(spanLabel(T('2026-11-30T22:00:00Z'), null, 'UTC')).toBe('30 Nov 22:00–now');
  });

  it('labels in the reader’s zone', () => {
    expect(dateTimeLabel(T('2026-11-30T23:30:00Z'), 'Asia/Tokyo')).toBe('1 Dec 08:30');
  });
});

describe('the chart’s geometry', () => {
  const box = { width: 220, height: 120, left: 20, right: 0, top: 0, bottom: 20 };

  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(3)).toBe(5);
    expect(niceMax(11)).toBe(20);
    expect(niceMax(5000)).toBe(5000);
  });

  it('maps the campaign to the plot, with its pauses, window and schedule', () => {
    const range = { from: T('2026-11-30T10:00:00Z'), to: T('2026-11-30T20:00:00Z') };
    const points = runningTotals([interval('2026-11-30T10:00:00Z', '2026-11-30T15:00:00Z', 10, 5)], range);
    const g = historyGeometry(
      points,
      range,
      {
        windows: [{ from: T('2026-11-30T09:00:00Z'), to: T('2026-11-30T12:00:00Z') }],
        pauses: [{ from: T('2026-11-30T15:00:00Z'), to: T('2026-11-30T16:00:00Z') }],
        startAt: T('2026-11-30T10:00:00Z'),
        endAt: T('2026-12-01T10:00:00Z'), // after the range: not drawn
      },
      box,
      'UTC',
    );
    expect(g.yMax).toBe(10);
    expect(g.lines.find((l) => l.key === 'calls')!.points).toBe('20,100 120,0 220,0');
    expect(g.lines.find((l) => l.key === 'successes')!.points).toBe('20,100 120,50 220,50');
    expect(g.windows).toEqual([{ x: 20, width: 40 }]); // cut to the range
    expect(g.pauses).toEqual([{ x: 120, width: 20, from: T('2026-11-30T15:00:00Z'), to: T('2026-11-30T16:00:00Z') }]);
    expect(g.schedule).toEqual([{ key: 'startAt', x: 20, t: T('2026-11-30T10:00:00Z') }]);
    expect(g.xTicks[0]).toEqual({ label: '30 Nov 10:00', x: 20 });
    expect(g.yTicks.map((t) => t.value)).toEqual([0, 5, 10]);
  });
});

describe('when the history is behind the statistics', () => {
  it('compares their outcomes and state', () => {
    const h = history({ intervals: [interval('2026-11-30T09:00:00Z', '2026-11-30T09:01:00Z', 3, 1, 1, 1), interval('2026-11-30T09:01:00Z', '2026-11-30T09:02:00Z', 2, 2)] });
    const stat = { status: TaskStatus.RUNNING, callCount: 5, successCount: 3, failCount: 1, noAnswerCount: 1 };
    expect(outcomeKey(h)).toBe(outcomeKey(stat));
    expect(outcomeKey(h)).not.toBe(outcomeKey({ ...stat, callCount: 6 }));
    expect(outcomeKey(h)).not.toBe(outcomeKey({ ...stat, status: TaskStatus.PAUSED }));
  });
});
