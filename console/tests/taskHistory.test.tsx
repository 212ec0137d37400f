// @vitest-environment happy-dom
// The task page's chart of the whole campaign (GET /api/task/{id}/history): read by the page's
// one poll, again only when the statistics show outcomes or a state it does not; its intervals
// in the hidden table, its pauses, its daily window when read in the task's zone, its schedule.
import { cleanup, render, screen, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TaskHistory, TaskStat, TaskView } from '../src/api/types';
import { StatsChart } from '../src/components/StatsChart';
import { FAST_POLL_MS, TaskPage } from '../src/pages/Task';
import { fakeApi } from './support/fakeApi';
import { wait } from './support/timers';
import { interval } from './support/history';

const TASK: TaskView = {
  id: 'task-1',
  taskName: 'Reminders',
  taskDesc: '',
  status: 2,
  dataSourceId: 'ds-1',
  contactCount: 50,
  callCount: 5,
  successCount: 3,
  failCount: 1,
  noAnswerCount: 1,
  dialRate: 0.1,
  successRate: 0.6,
  callDuration: 100,
  avgCallDuration: 20,
  createTime: '2030-01-01 08:00:00',
  startTime: '2030-01-01 09:00:00',
  updateTime: '2030-01-01 12:00:00',
  priority: 3,
  maxDialCount: 2,
  callInterval: 60,
  dailyStartTime: '09:00',
  dailyEndTime: '17:00',
  timeZone: 'Europe/Paris',
  windowTimeZone: 'TASK',
  retryRules: [],
  callerId: null,
  contactFlowId: null,
  callAttributes: [],
  resultAttributes: [],
  voicemail: 'HANG_UP',
  dialingMode: 'AGENTLESS',
  queueId: null,
  callsPerAgent: 1,
  abandonmentTarget: 3,
  abandonCount: 0,
  abandonRate: 0,
  callbackCount: 0,
  startAt: '2030-01-01T09:30:00Z',
  endAt: '2030-01-05T17:00:00Z',
  filter: [],
};

const STAT: TaskStat = {
  taskId: 'task-1',
  taskName: 'Reminders',
  status: 2,
  totalContacts: 50,
  callCount: 5,
  successCount: 3,
  failCount: 1,
  noAnswerCount: 1,
  dialRate: 0.1,
  successRate: 0.6,
  totalDuration: 100,
  avgDuration: 20,
  abandonCount: 0,
  abandonRate: 0,
  filteredCount: 0,
  callbackCount: 0,
  lastUpdateTime: '2030-01-01 12:00:00',
};


const HISTORY: TaskHistory = {
  taskId: 'task-1',
  status: 2,
  startTime: '2030-01-01T09:00:00Z',
  intervals: [interval('2030-01-01T09:30:00Z', '2030-01-01T09:31:00Z', 3, 2, 1, 0), interval('2030-01-01T10:00:00Z', '2030-01-01T10:01:00Z', 2, 1, 0, 1)],
  states: [
    { time: '2030-01-01T09:00:00Z', status: 1 },
    { time: '2030-01-01T10:30:00Z', status: 2 },
  ],
};

afterEach(cleanup);

/** The hidden table's rows, cells as text. */
function tableRows() {
  const table = screen.getByRole('table', { name: /Outcomes by interval/ });
  return within(table)
    .getAllByRole('row')
    .slice(1)
    .map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent));
}

describe('the campaign chart', () => {
  const NOW = Date.parse('2030-01-01T12:00:00Z');

  it('lists each interval with its times and counts, and marks the pauses, the window and the schedule', () => {
    render(<StatsChart history={HISTORY} task={TASK} now={NOW} zone="UTC" />);
    expect(tableRows()).toEqual([
      ['1 Jan 09:30', '1 Jan 09:31', '3', '2', '1', '0'],
      ['1 Jan 10:00', '1 Jan 10:01', '2', '1', '0', '1'],
    ]);
    const chart = screen.getByTestId('stats-chart');
    expect(chart.querySelector('desc')?.textContent).toBe('Running totals from 1 Jan 09:00 to now: 5 calls in 2 intervals; the table below gives them.');
    // Paused from 10:30 until now: one labelled span.
    expect(screen.getAllByTestId('chart-pause')).toHaveLength(1);
    expect(screen.getByTestId('chart-pause').textContent).toContain('Paused');
    // Paris's 09:00-17:00 is 08:00-16:00 UTC: open from the start at 09:00 to the end, 12:00.
    expect(screen.getAllByTestId('chart-window')).toHaveLength(1);
    // The schedule's start is inside the campaign; its stop, days ahead, is only told.
    expect(screen.getAllByTestId('chart-schedule').map((g) => g.textContent)).toEqual(['Scheduled start']);
    const caption = chart.closest('figure')!.querySelector('figcaption')!.textContent;
    expect(caption).toBe(
      'Paused (grey): 1 Jan 10:30–now. Green bands: its daily window, 09:00–17:00 in Europe/Paris. ' +
        'Scheduled start: 1 Jan 09:30 (purple line). Scheduled stop: 5 Jan 17:00.',
    );
    // The axis reads clock times.
    const labels = [...chart.querySelectorAll('text')].map((t) => t.textContent);
    expect(labels).toContain('1 Jan 09:00');
    expect(labels).toContain('Time (UTC)');
  });

  it('does not shade a window read in each contact’s own time, and says so', () => {
    render(<StatsChart history={HISTORY} task={{ ...TASK, windowTimeZone: 'CALLED_PARTY', startAt: null, endAt: null }} now={NOW} zone="UTC" />);
    expect(screen.queryAllByTestId('chart-window')).toHaveLength(0);
    expect(screen.queryAllByTestId('chart-schedule')).toHaveLength(0);
    expect(screen.getByText(/is read in each contact’s own time, so it is not shaded/)).toBeTruthy();
  });

  it('says a task that has not started has no history yet', () => {
    render(<StatsChart history={{ ...HISTORY, status: 0, startTime: null, intervals: [], states: [] }} task={{ ...TASK, status: 0 }} now={NOW} zone="UTC" />);
    expect(screen.getByTestId('stats-chart').querySelector('desc')?.textContent).toBe('It has not started yet.');
    expect(screen.getByTestId('stats-chart').querySelectorAll('polyline')).toHaveLength(0);
  });
});

describe('the task page’s poll', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads the history again only once the statistics show more than it does', async () => {
    let stat = STAT;
    let history = HISTORY;
    const sent = fakeApi({
      'GET /api/task/detail/task-1': () => TASK,
      'GET /api/task/task-1/stat': () => stat,
      'GET /api/task/task-1/diagnostics': () => null,
      'GET /api/task/task-1/history': () => history,
    });
    const reads = () => sent.filter((s) => s.path === '/api/task/task-1/history').length;
    render(<TaskPage id="task-1" />);
    await wait(50);
    expect(reads()).toBe(1);
    await wait(FAST_POLL_MS);
    await wait(FAST_POLL_MS);
    expect(reads()).toBe(1);
    // A call ends: the next poll's figures show it, the one after reads the history again.
    stat = { ...STAT, callCount: 6, successCount: 4 };
    history = { ...HISTORY, intervals: [...HISTORY.intervals, interval('2030-01-01T11:00:00Z', '2030-01-01T11:01:00Z', 1, 1, 0, 0)] };
    await wait(FAST_POLL_MS);
    await wait(FAST_POLL_MS);
    expect(reads()).toBe(2);
    expect(tableRows()).toHaveLength(3);
    await wait(FAST_POLL_MS);
    expect(reads()).toBe(2);
  });
});
