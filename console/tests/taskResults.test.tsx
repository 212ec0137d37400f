// @vitest-environment happy-dom
// A task's results (D22): the bars and table of each result attribute, and the task page that
// reads them with its statistics (one poll) and shows the task's telephony in its details.
import { cleanup, render, screen, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Diagnostics, Settings, TaskResults, TaskStat, TaskView } from '../src/api/types';
import { TaskResultsView } from '../src/components/TaskResults';
import { FAST_POLL_MS, TaskPage } from '../src/pages/Task';
import { fakeApi } from './support/fakeApi';
import { wait } from './support/timers';

const RESULTS: TaskResults = {
  attributes: [
    {
      name: 'outcome',
      values: [
        { value: 'confirmed', count: 6 },
        { value: 'declined', count: 2 },
      ],
      otherCount: 1,
      missingCount: 1,
    },
    { name: 'callbackAt', values: [], otherCount: 0, missingCount: 0 },
  ],
};

/** The rows of a table as the text of their cells. */
const cells = (table: HTMLElement) =>
  [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((cell) => cell.textContent));

afterEach(cleanup);

describe('results view', () => {
  it('draws each result as bars with a table of value, count and share, other values and not set last', () => {
    render(<TaskResultsView results={RESULTS} />);
    const section = screen.getByRole('region', { name: 'Results' });
    const outcome = within(within(section).getByRole('group', { name: 'outcome' }));
    expect(cells(outcome.getByRole('table', { name: 'outcome: values among 10 answered contacts' }))).toEqual([
      ['confirmed', '6', '60%'],
      ['declined', '2', '20%'],
      ['Other values', '1', '10%'],
      ['Not set', '1', '10%'],
    ]);
    const bars = [...outcome.getByTestId('result-outcome-bars').querySelectorAll('li')];
    expect(bars.map((li) => [li.children[0].textContent, li.children[2].textContent])).toEqual([
      ['confirmed', '6'],
      ['declined', '2'],
      ['Other values', '1'],
      ['Not set', '1'],
    ]);
    // Each bar is as long as its count against the largest.
    expect(bars.map((li) => (li.querySelector('.bar span') as HTMLElement).style.width)).toEqual(['100%', '33.33333333333333%', '16.666666666666664%', '16.666666666666664%']);
    expect(bars.map((li) => li.className)).toEqual(['', '', 'aside', 'aside']);
    // The bars repeat the table: hidden from assistive technology.
    expect(outcome.getByTestId('result-outcome-bars').getAttribute('aria-hidden')).toBe('true');
    expect(within(section.querySelector('[aria-labelledby="result-callbackAt"]') as HTMLElement).getByText('No answered call yet.')).toBeTruthy();
  });

  it('says it is loading before the first answer', () => {
    render(<TaskResultsView results={null} />);
    expect(screen.getByText('Loading results…')).toBeTruthy();
  });
});

const TASK: TaskView = {
  id: 'task-1',
  taskName: 'Reminders',
  taskDesc: '',
  status: 1,
  dataSourceId: 'ds-1',
  contactCount: 10,
  callCount: 10,
  successCount: 8,
  failCount: 1,
  noAnswerCount: 1,
  dialRate: 1,
  successRate: 0.8,
  callDuration: 100,
  avgCallDuration: 10,
  createTime: '2030-01-01 00:00:00',
  updateTime: '2030-01-01 00:00:00',
  priority: 3,
  maxDialCount: 1,
  callInterval: 60,
  windowTimeZone: 'CALLED_PARTY',
  retryRules: [],
  callerId: 'LOCAL_PRESENCE',
  contactFlowId: 'flow-remind',
  callAttributes: ['customerName', 'e164'],
  resultAttributes: ['outcome', 'callbackAt'],
  voicemail: 'LEAVE_MESSAGE',
  dialingMode: 'AGENTLESS',
  queueId: null,
  callsPerAgent: 1,
  abandonmentTarget: 3,
  abandonCount: 0,
  abandonRate: 0,
  callbackCount: 0,
  filter: [],
};

const STAT: TaskStat = {
  taskId: 'task-1',
  taskName: 'Reminders',
  status: 1,
  totalContacts: 10,
  callCount: 10,
  successCount: 8,
  failCount: 1,
  noAnswerCount: 1,
  dialRate: 1,
  successRate: 0.8,
  totalDuration: 100,
  avgDuration: 10,
  abandonCount: 0,
  abandonRate: 0,
  filteredCount: 0,
  callbackCount: 0,
  lastUpdateTime: '2030-01-01 00:00:00',
};

const DIAG: Diagnostics = {
  taskId: 'task-1',
  status: 1,
  dialing: true,
  inFlight: 0,
  contacts: { total: 10, notDialled: 0, waiting: 0, inFlight: 0, final: 10 },
  skips: { DNC: 0, INVALID_NUMBER: 0, OUTSIDE_WINDOW: 0, CALLING_HOURS: 0, FREQUENCY_CAP: 0, NO_COMMON_WINDOW: 0, ATTRIBUTES_TOO_LARGE: 0, FILTERED: 0 },
  reasons: { ANSWERED: 8, NO_ANSWER: 1, BUSY: 1, VOICEMAIL: 0, ABANDONED: 0, INVALID_NUMBER: 0, ERROR: 0, NO_OUTCOME: 0 },
};

const SETTINGS: Settings = {
  callerIds: ['+12125550100'],
  contactFlows: [{ id: 'flow-remind', name: 'Order reminder' }],
  queues: [],
  defaultCallerId: '+12125550100',
  defaultContactFlowId: null,
};

describe('task page', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function open(task: TaskView) {
    let answered = 0;
    const sent = fakeApi({
      'GET /api/task/detail/task-1': () => task,
      'GET /api/task/task-1/stat': () => STAT,
      'GET /api/task/task-1/diagnostics': () => DIAG,
      'GET /api/settings': () => SETTINGS,
      'GET /api/task/task-1/results': () => {
        answered++;
        const [outcome, ...rest] = RESULTS.attributes;
        return { attributes: [{ ...outcome, missingCount: answered }, ...rest] };
      },
    });
    render(<TaskPage id="task-1" />);
    return sent;
  }

  /** The task's details, term to description. */
  const details = () => {
    const list = screen.getByRole('heading', { level: 1, name: 'Reminders' }).parentElement!.querySelector('dl')!;
    return Object.fromEntries([...list.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
  };

  const reads = (sent: { path: string }[], what: string) => sent.filter((s) => s.path === `/api/task/task-1/${what}`).length;

  it('shows the task’s caller ID, flow, attributes and voicemail', async () => {
    open(TASK);
    await wait(0);
    expect(details()).toMatchObject({
      'Caller ID': 'Local presence',
      'Contact flow': 'Order reminder',
      'Call attributes': 'customerName, e164',
      'Result attributes': 'outcome, callbackAt',
      'On voicemail': 'Leave a message',
    });
  });

  it('shows the tenant’s defaults for a task without its own', async () => {
    open({ ...TASK, callerId: null, contactFlowId: null, callAttributes: [], resultAttributes: [], voicemail: 'HANG_UP' });
    await wait(0);
    expect(details()).toMatchObject({
      'Caller ID': 'Tenant default (+12125550100)',
      'Contact flow': 'Tenant default (not set)',
      'Call attributes': 'None',
      'Result attributes': 'None',
      'On voicemail': 'Hang up',
    });
  });

  it('reads the results with the statistics, on the same poll', async () => {
    const sent = open(TASK);
    // (Effects run after a frame: 35 ms at most.)
    await wait(50);
    const notSet = () => {
      const table = within(screen.getByRole('group', { name: 'outcome' })).getByRole('table');
      return cells(table).find((row) => row[0] === 'Not set')?.[1];
    };
    // A tick at once, and another as the task shows it records results: that one reads them too.
    expect(reads(sent, 'stat')).toBe(2);
    expect(reads(sent, 'results')).toBe(1);
    expect(notSet()).toBe('1');
    await wait(FAST_POLL_MS);
    expect(reads(sent, 'stat')).toBe(3);
    expect(reads(sent, 'results')).toBe(2);
    expect(notSet()).toBe('2');
    await wait(FAST_POLL_MS);
    expect(reads(sent, 'stat')).toBe(4);
    expect(reads(sent, 'results')).toBe(3);
  });

  it('neither reads nor shows results for a task that records none', async () => {
    const sent = open({ ...TASK, resultAttributes: [] });
    await wait(50);
    await wait(FAST_POLL_MS * 2);
    expect(reads(sent, 'stat')).toBe(3);
    expect(reads(sent, 'results')).toBe(0);
    expect(screen.queryByRole('region', { name: 'Results' })).toBeNull();
  });
});
