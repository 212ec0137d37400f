// @vitest-environment happy-dom
// An agent-paced task (D30) on its page: the "Agents" panel (the queue's agents, the calls in
// flight, the abandonment rate against the target), read on the page's one poll, the abandoned
// calls among the statistics, and the diagnostics' words for NO_AGENTS and ABANDONED.
import { cleanup, render, screen, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Diagnostics, Settings, TaskHistory, TaskStat, TaskView } from '../src/api/types';
import { AgentsPanel } from '../src/components/AgentsPanel';
import { FAST_POLL_MS, TaskPage } from '../src/pages/Task';
import { fakeApi } from './support/fakeApi';
import { wait } from './support/timers';

const TASK: TaskView = {
  id: 'task-1',
  taskName: 'Renewals',
  taskDesc: '',
  status: 1,
  dataSourceId: 'ds-1',
  contactCount: 200,
  callCount: 120,
  successCount: 90,
  failCount: 5,
  noAnswerCount: 25,
  dialRate: 0.6,
  successRate: 0.75,
  callDuration: 6000,
  avgCallDuration: 50,
  createTime: '2030-01-01 00:00:00',
  updateTime: '2030-01-01 00:00:00',
  priority: 3,
  maxDialCount: 2,
  callInterval: 60,
  windowTimeZone: 'CALLED_PARTY',
  retryRules: [{ reason: 'ABANDONED', delaySeconds: 600 }],
  callerId: null,
  contactFlowId: null,
  callAttributes: [],
  resultAttributes: [],
  voicemail: 'HANG_UP',
  dialingMode: 'PREDICTIVE',
  queueId: 'q-renewals',
  callsPerAgent: 1,
  abandonmentTarget: 3,
  abandonCount: 2,
  abandonRate: 0.0211,
  callbackCount: 0,
  filter: [],
};

const STAT: TaskStat = {
  taskId: 'task-1',
  taskName: 'Renewals',
  status: 1,
  totalContacts: 200,
  callCount: 120,
  successCount: 90,
  failCount: 5,
  noAnswerCount: 25,
  dialRate: 0.6,
  successRate: 0.75,
  totalDuration: 6000,
  avgDuration: 50,
  abandonCount: 4,
  abandonRate: 0.0421,
  filteredCount: 0,
  callbackCount: 0,
  lastUpdateTime: '2030-01-01 00:05:00',
};

const DIAG: Diagnostics = {
  taskId: 'task-1',
  status: 1,
  dialing: true,
  inFlight: 7,
  contacts: { total: 200, notDialled: 80, waiting: 20, inFlight: 7, final: 93 },
  skips: { DNC: 0, INVALID_NUMBER: 0, OUTSIDE_WINDOW: 0, CALLING_HOURS: 0, FREQUENCY_CAP: 0, NO_COMMON_WINDOW: 0, ATTRIBUTES_TOO_LARGE: 0, FILTERED: 0 },
  reasons: { ANSWERED: 95, NO_ANSWER: 20, VOICEMAIL: 0, ABANDONED: 4, BUSY: 1, INVALID_NUMBER: 0, ERROR: 0, NO_OUTCOME: 0 },
  agents: { queueId: 'q-renewals', available: 2, busy: 5, soonFree: 1, readTime: '2030-01-01 00:04:58' },
};

/** The campaign so far: its outcomes sum to STAT's. */
const HISTORY: TaskHistory = {
  taskId: 'task-1',
  status: 1,
  startTime: '2030-01-01T00:00:00Z',
  intervals: [
    { from: '2030-01-01T00:00:00Z', to: '2030-01-01T00:01:00Z', callCount: 100, successCount: 75, failCount: 5, noAnswerCount: 20, abandonCount: 3, callbackCount: 0 },
    { from: '2030-01-01T00:01:00Z', to: '2030-01-01T00:04:30Z', callCount: 20, successCount: 15, failCount: 0, noAnswerCount: 5, abandonCount: 1, callbackCount: 0 },
  ],
  states: [{ time: '2030-01-01T00:00:00Z', status: 1 }],
};

const SETTINGS: Settings = {
  callerIds: [],
  contactFlows: [],
  queues: [{ id: 'q-renewals', name: 'Renewals team' }],
};

afterEach(cleanup);

/** The panel's figures, label to value and the note under it, and whether each is flagged. */
function figures() {
  const list = screen.getByTestId('agents');
  return Object.fromEntries(
    [...list.querySelectorAll(':scope > div')].map((div) => [
      div.querySelector('dt')?.textContent,
      { value: div.querySelector('dd')?.textContent, note: div.querySelector('dd.note')?.textContent ?? null, flagged: div.classList.contains('flag') },
    ]),
  );
}

describe('agents panel', () => {
  it('shows the queue, its agents, the calls in flight and the rate over its target, flagged', () => {
    render(<AgentsPanel task={TASK} stat={STAT} diag={DIAG} settings={SETTINGS} />);
    const section = screen.getByRole('region', { name: 'Agents' });
    expect(within(section).getByText('Predictive (dials ahead of agents).')).toBeTruthy();
    expect(figures()).toEqual({
      Queue: { value: 'Renewals team (q-renewals)', note: null, flagged: false },
      'Agents available': { value: '2', note: null, flagged: false },
      'Agents busy': { value: '5', note: '1 about to be free', flagged: false },
      'Calls in flight': { value: '7', note: null, flagged: false },
      // The statistics' rate (the poll's), not the detail's.
      'Abandonment rate': { value: '4.2%', note: 'At or above the target of 3% (4 abandoned)', flagged: true },
    });
    expect(within(section).getByText('Agents read at 2030-01-01 00:04:58.')).toBeTruthy();
  });

  it('does not flag a rate under the target', () => {
    render(<AgentsPanel task={{ ...TASK, abandonmentTarget: 5 }} stat={STAT} diag={DIAG} settings={SETTINGS} />);
    expect(figures()['Abandonment rate']).toEqual({ value: '4.2%', note: 'Target 5% (4 abandoned)', flagged: false });
  });

  it('flags a rate right at the target', () => {
    render(<AgentsPanel task={TASK} stat={{ ...STAT, abandonRate: 0.03 }} diag={DIAG} settings={SETTINGS} />);
    expect(figures()['Abandonment rate']).toMatchObject({ value: '3%', flagged: true });
  });

  it('says the agents are not read yet, and takes the detail’s rate before the first statistics', () => {
    render(<AgentsPanel task={{ ...TASK, dialingMode: 'PROGRESSIVE', callsPerAgent: 1.5 }} stat={null} diag={{ ...DIAG, agents: null }} settings={null} />);
    expect(screen.getByText('Progressive (paced to free agents), 1.5 calls per agent.')).toBeTruthy();
    expect(figures()).toEqual({
      Queue: { value: 'q-renewals', note: null, flagged: false },
      'Agents available': { value: 'not read yet', note: null, flagged: false },
      'Agents busy': { value: 'not read yet', note: null, flagged: false },
      'Calls in flight': { value: '7', note: null, flagged: false },
      'Abandonment rate': { value: '2.1%', note: 'Target 3% (2 abandoned)', flagged: false },
    });
    expect(screen.getByText('The queue’s agents are not read yet: the service reads them while the task runs.')).toBeTruthy();
  });

  it('shows no figure of the diagnostics before they are read', () => {
    render(<AgentsPanel task={TASK} stat={STAT} diag={null} settings={SETTINGS} />);
    expect(figures()).toMatchObject({
      'Agents available': { value: 'not read yet' },
      'Calls in flight': { value: '—' },
    });
  });
});

describe('an agent-paced task’s page', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function open(task: TaskView, diag: Diagnostics = DIAG) {
    const sent = fakeApi({
      'GET /api/task/detail/task-1': () => task,
      'GET /api/task/task-1/stat': () => STAT,
      'GET /api/task/task-1/diagnostics': () => diag,
      'GET /api/task/task-1/history': () => HISTORY,
      'GET /api/settings': () => SETTINGS,
    });
    render(<TaskPage id="task-1" />);
    return sent;
  }

  const reads = (sent: { path: string }[], path: string) => sent.filter((s) => s.path === path).length;
  const statFigure = (label: string) => {
    const stats = screen.getByRole('region', { name: 'Statistics' });
    return within(stats).queryByText(label, { selector: 'dt' })?.nextElementSibling?.textContent;
  };
  const details = () => {
    const list = screen.getByRole('heading', { level: 1, name: 'Renewals' }).parentElement!.querySelector('dl')!;
    return Object.fromEntries([...list.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
  };

  it('shows the agents panel from the page’s one poll, following each tick', async () => {
    let available = 2;
    const sent = fakeApi({
      'GET /api/task/detail/task-1': () => TASK,
      'GET /api/task/task-1/stat': () => STAT,
      'GET /api/task/task-1/diagnostics': () => ({ ...DIAG, agents: { ...DIAG.agents!, available: available++ } }),
      'GET /api/task/task-1/history': () => HISTORY,
      'GET /api/settings': () => SETTINGS,
    });
    render(<TaskPage id="task-1" />);
    await wait(50);
    const ticks = reads(sent, '/api/task/task-1/stat');
    expect(reads(sent, '/api/task/task-1/diagnostics')).toBe(ticks);
    expect(figures()['Agents available'].value).toBe(String(available - 1));
    await wait(FAST_POLL_MS);
    // One more tick: one more read of each, nothing else polled for the panel.
    expect(reads(sent, '/api/task/task-1/stat')).toBe(ticks + 1);
    expect(reads(sent, '/api/task/task-1/diagnostics')).toBe(ticks + 1);
    // The callbacks (D31) are read by the same poll, once a tick.
    expect(reads(sent, '/api/task/task-1/callbacks')).toBe(ticks + 1);
    expect(figures()['Agents available'].value).toBe(String(available - 1));
    // The history once: the statistics have shown nothing it does not since.
    expect(sent.filter((s) => !/^\/api\/task\/task-1\/(stat|diagnostics|callbacks)$/.test(s.path)).map((s) => s.path).sort()).toEqual([
      '/api/dataSource/ds-1/contacts',
      '/api/settings',
      '/api/task/detail/task-1',
      '/api/task/task-1/history',
    ]);
  });

  it('shows the mode, queue and target among the details, and the abandoned calls among the statistics', async () => {
    open(TASK);
    await wait(50);
    expect(details()).toMatchObject({
      'Dialing mode': 'Predictive (dials ahead of agents)',
      Queue: 'Renewals team (q-renewals)',
      'Abandonment target': '3%',
      'Retry rules': 'Abandoned: wait 10 min',
    });
    expect(details()).not.toHaveProperty('Calls per agent');
    expect(statFigure('Abandoned')).toBe('4');
    expect(figures()['Abandonment rate']).toMatchObject({ value: '4.2%', flagged: true });
    // The outcome reasons name the abandoned calls.
    const reasons = within(screen.getByRole('region', { name: 'Outcome reasons' }));
    expect(reasons.getByText('Abandoned').nextElementSibling?.nextElementSibling?.textContent).toBe('4');
  });

  it('says when no agent is free to take a call', async () => {
    open(TASK, { ...DIAG, dialing: false, blockedBy: 'NO_AGENTS', agents: { ...DIAG.agents!, available: 0, busy: 7, soonFree: 0 } });
    await wait(50);
    expect(screen.getByTestId('diagnosis').textContent).toBe(
      'No agent of its queue is free to take an answered call (or about to be); dialling resumes as agents become free.',
    );
    expect(figures()).toMatchObject({ 'Agents available': { value: '0' }, 'Agents busy': { value: '7', note: null } });
  });

  it('shows neither the panel nor abandoned calls for an agentless task', async () => {
    open({ ...TASK, dialingMode: 'AGENTLESS', queueId: null, retryRules: [] }, { ...DIAG, agents: null });
    await wait(50);
    expect(screen.queryByRole('region', { name: 'Agents' })).toBeNull();
    expect(statFigure('Calls')).toBe('120');
    expect(statFigure('Abandoned')).toBeUndefined();
    expect(details()).toMatchObject({ 'Dialing mode': 'Agentless (the flow takes the call)' });
    expect(details()).not.toHaveProperty('Queue');
  });
});
