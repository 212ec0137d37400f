// @vitest-environment happy-dom
// The task form (TaskForm) with its retry rules: what it shows, what it refuses and what it
// sends, alone and from the pages that use it (Tasks: create; TaskActions: edit).
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AddTask, Contact, DataSource, Settings, TaskView } from '../src/api/types';
import { TaskActions } from '../src/components/TaskActions';
import { TaskForm } from '../src/components/TaskForm';
import { TasksPage } from '../src/pages/Tasks';
import { attributeChoices } from '../src/state/telephony';
import { fakeApi } from './support/fakeApi';

const source = (id: string, name: string, contactCount: number): DataSource => ({
  id,
  dataSourceName: name,
  dataSourceDesc: '',
  contactCount,
  defaultCountry: null,
  createTime: '2030-01-01T00:00:00Z',
  updateTime: '2030-01-01T00:00:00Z',
});

const SOURCES = [source('ds-1', 'Customers', 5), source('ds-2', 'Leads', 12)];

const page = <T,>(rows: T[]) => ({ total: rows.length, rows, nextToken: null });

const DRAFT: TaskView = {
  id: 'task-1',
  taskName: 'Spring campaign',
  taskDesc: 'Five contacts',
  status: 0,
  dataSourceId: 'ds-2',
  contactCount: 12,
  callCount: 0,
  successCount: 0,
  failCount: 0,
  noAnswerCount: 0,
  dialRate: 0,
  successRate: 0,
  callDuration: 0,
  avgCallDuration: 0,
  createTime: '2030-01-01T00:00:00Z',
  updateTime: '2030-01-01T00:00:00Z',
  priority: 2,
  maxDialCount: 4,
  callInterval: 120,
  dailyStartTime: '09:00',
  dailyEndTime: '18:00',
  timeZone: 'Europe/Paris',
  windowTimeZone: 'TASK',
  retryRules: [{ reason: 'BUSY', delaySeconds: 300, maxAttempts: 2 }, { reason: 'NO_ANSWER' }],
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
  filter: [],
};

/** The tenant's telephony as the operator assigned it (D22). */
const SETTINGS: Settings = {
  defaultCountry: 'US',
  callingHours: null,
  frequencyCap: null,
  updateTime: null,
  callerIds: ['+12125550100', '+442071838750'],
  contactFlows: [
    { id: 'flow-remind', name: 'Order reminder' },
    { id: 'flow-survey', name: 'Survey' },
  ],
  queues: [
    { id: 'q-renewals', name: 'Renewals team' },
    { id: 'q-sales', name: 'Sales' },
  ],
  defaultCallerId: '+12125550100',
  defaultContactFlowId: 'flow-survey',
};

// (The generated type of a contact, fixed fields beside a string index, has no literal: cast.)
const contact = (id: string, custom: Record<string, string>) =>
  ({
  id,
  dataSourceId: 'ds-1',
  phoneNumber: '12025550101',
  e164: '+12025550101',
  customerName: 'Ada',
  status: 0,
  callCount: 0,
  createTime: '2030-01-01T00:00:00Z',
  updateTime: '2030-01-01T00:00:00Z',
  ...custom,
  }) as unknown as Contact;

/** The first page of each data source's contacts: their custom fields are what a call may send. */
const CONTACTS: Record<string, Contact[]> = {
  'ds-1': [contact('c-1', { orderId: 'A-1' }), contact('c-2', { orderId: 'A-2', plan: 'gold' })],
  'ds-2': [contact('c-3', { region: 'north' })],
};

/** The routes of the telephony fields: the tenant's settings and a data source's contacts. */
function telephonyRoutes(settings: Settings = SETTINGS) {
  return {
    'GET /api/settings': () => settings,
    ...Object.fromEntries(Object.entries(CONTACTS).map(([id, rows]) => [`GET /api/dataSource/${id}/contacts`, () => page(rows)])),
  };
}

afterEach(cleanup);

/** The form alone over a fake API listing `sources`; answers the onSubmit spy and the form. */
async function openForm(props: { initial?: TaskView; sources?: DataSource[]; settings?: Settings } = {}) {
  const sources = props.sources ?? SOURCES;
  const sent = fakeApi({
    'GET /api/dataSource/list': () => page(sources),
    ...Object.fromEntries(sources.map((ds) => [`GET /api/dataSource/detail/${ds.id}`, () => ds])),
    ...telephonyRoutes(props.settings),
  });
  const onSubmit = vi.fn<(body: AddTask) => void>();
  const onCancel = vi.fn();
  const label = props.initial ? 'Edit task' : 'New task';
  render(<TaskForm label={label} initial={props.initial} submitLabel={props.initial ? 'Save' : 'Create'} busy={false} onSubmit={onSubmit} onCancel={onCancel} />);
  const form = await screen.findByRole('form', { name: label });
  // The data sources have loaded once the select lists them (or the list came back empty); a
  // draft's select shows its own, named from its detail, and lists none.
  const asked = props.initial ? `/api/dataSource/detail/${props.initial.dataSourceId}` : '/api/dataSource/list';
  await waitFor(() => expect(sent.some((s) => s.path === asked)).toBe(true));
  await waitFor(() => expect(within(form).getByLabelText('Data source').querySelectorAll('option').length).toBe(props.initial ? 1 : sources.length));
  // So have the tenant's caller IDs (after the tenant's default and local presence, and the
  // task's own when the tenant no longer lists it) and the data source's fields.
  const numbers = (props.settings ?? SETTINGS).callerIds ?? [];
  const own = props.initial?.callerId && props.initial.callerId !== 'LOCAL_PRESENCE' && !numbers.includes(props.initial.callerId) ? 1 : 0;
  await waitFor(() => expect(within(form).getByRole('combobox', { name: 'Caller ID' }).querySelectorAll('option').length).toBe(2 + numbers.length + own));
  const shown = props.initial?.dataSourceId ?? (props.sources ?? SOURCES)[0]?.id;
  const fields = attributeChoices(CONTACTS[shown] ?? [], props.initial?.callAttributes ?? []);
  await waitFor(() => expect(within(form).getAllByRole('checkbox')).toHaveLength(fields.length));
  return { form: within(form), onSubmit, onCancel, sent };
}

type Form = Awaited<ReturnType<typeof openForm>>['form'];

const input = (form: Form, label: string) => form.getByLabelText(label) as HTMLInputElement;
const type = (form: Form, label: string, value: string) => fireEvent.input(input(form, label), { target: { value } });
const rule = (form: Form, n: number) => within(form.getByRole('group', { name: `Retry rule ${n}` }));
const reasonOf = (form: Form, n: number) => rule(form, n).getByRole('combobox') as HTMLSelectElement;
const optionsOf = (select: HTMLSelectElement) => [...select.options].map((o) => o.value);

describe('task form', () => {
  it('shows a new task with the defaults and the data sources to choose from', async () => {
    const { form, sent } = await openForm();
    expect(sent[0].query).toEqual({ pageNum: '1', pageSize: '100' });
    expect(input(form, 'Name').value).toBe('');
    expect(input(form, 'Name').required).toBe(true);
    const ds = form.getByLabelText('Data source') as HTMLSelectElement;
    expect(ds.disabled).toBe(false);
    expect([...ds.options].map((o) => o.textContent)).toEqual(['Customers (5 contacts)', 'Leads (12 contacts)']);
    expect(ds.value).toBe('ds-1');
    expect(input(form, 'Priority').value).toBe('3');
    expect(input(form, 'Max dial count').value).toBe('3');
    expect(input(form, 'Call interval (seconds)').value).toBe('60');
    expect(input(form, 'Daily start time').value).toBe('');
    expect((form.getByLabelText('Window time zone') as HTMLSelectElement).value).toBe('');
    expect(form.queryAllByRole('group', { name: /^Retry rule \d+$/ })).toEqual([]);
    expect(form.getByRole('button', { name: 'Add retry rule' })).toBeTruthy();
    expect(form.queryByRole('alert')).toBeNull();
  });

  it('sends the values typed, and leaves out the window it was not given', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', '  Spring campaign  ');
    type(form, 'Description', ' Five contacts ');
    fireEvent.change(form.getByLabelText('Data source'), { target: { value: 'ds-2' } });
    type(form, 'Priority', '1');
    type(form, 'Max dial count', '2');
    type(form, 'Call interval (seconds)', '10');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit).toHaveBeenCalledTimes(1);
    expect(onSubmit.mock.calls[0][0]).toEqual({
      taskName: 'Spring campaign',
      taskDesc: 'Five contacts',
      dataSourceId: 'ds-2',
      priority: 1,
      maxDialCount: 2,
      callInterval: 10,
      retryRules: [],
    });
  });

  it('sends the daily window, its zone and the task time zone when given', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Windowed');
    type(form, 'Daily start time', '09:00');
    type(form, 'Daily end time', '17:30');
    fireEvent.change(form.getByLabelText('Window time zone'), { target: { value: 'TASK' } });
    type(form, 'Task time zone', ' Asia/Shanghai ');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0]).toMatchObject({
      dataSourceId: 'ds-1',
      dailyStartTime: '09:00',
      dailyEndTime: '17:30',
      windowTimeZone: 'TASK',
      timeZone: 'Asia/Shanghai',
    });
  });

  it('sends the schedule with the browser zone offset and the filter’s conditions (D31)', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Scheduled');
    type(form, 'Start calling at', '2030-03-01T09:00');
    type(form, 'Stop the task at', '2030-03-05T18:30');
    fireEvent.click(form.getByRole('button', { name: 'Add condition' }));
    fireEvent.click(form.getByRole('button', { name: 'Add condition' }));
    const condition = (n: number) => within(form.getByRole('group', { name: `Condition ${n}` }));
    fireEvent.input(condition(1).getByLabelText('Field'), { target: { value: 'region' } });
    fireEvent.change(condition(1).getByLabelText('Test'), { target: { value: 'in' } });
    fireEvent.input(condition(1).getByLabelText('Values (comma-separated)'), { target: { value: 'north, east' } });
    fireEvent.input(condition(2).getByLabelText('Field'), { target: { value: 'vip' } });
    fireEvent.change(condition(2).getByLabelText('Test'), { target: { value: 'exists' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    const sent = onSubmit.mock.calls[0][0];
    expect(new Date(sent.startAt!).getTime()).toBe(new Date(2030, 2, 1, 9, 0).getTime());
    expect(sent.startAt).toMatch(/^2030-03-01T09:00:00[+-]\d{2}:\d{2}$/);
    expect(new Date(sent.endAt!).getTime()).toBe(new Date(2030, 2, 5, 18, 30).getTime());
    expect(sent.filter).toEqual([
      { field: 'region', op: 'in', value: ['north', 'east'] },
      { field: 'vip', op: 'exists' },
    ]);
  });

  it('refuses an end before the start and a condition without its value', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Backwards');
    type(form, 'Start calling at', '2030-03-05T09:00');
    type(form, 'Stop the task at', '2030-03-01T09:00');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect((await form.findByRole('alert')).textContent).toContain('The schedule’s end must come after its start.');
    type(form, 'Stop the task at', '');
    fireEvent.click(form.getByRole('button', { name: 'Add condition' }));
    fireEvent.input(within(form.getByRole('group', { name: 'Condition 1' })).getByLabelText('Field'), { target: { value: 'region' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect((await form.findByRole('alert')).textContent).toContain('Condition 1: give a value.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('adds retry rules, one per reason, and sends them with the values given', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'With rules');
    const add = () => fireEvent.click(form.getByRole('button', { name: 'Add retry rule' }));
    add();
    add();
    expect(reasonOf(form, 1).value).toBe('NO_ANSWER');
    expect(reasonOf(form, 2).value).toBe('VOICEMAIL');
    // A reason taken by another rule is not offered again.
    expect(optionsOf(reasonOf(form, 2))).toEqual(['VOICEMAIL', 'ABANDONED', 'BUSY', 'ERROR', 'NO_OUTCOME']);
    expect([...reasonOf(form, 1).options].map((o) => o.textContent)).toEqual(['No answer', 'Abandoned', 'Busy', 'Error', 'No outcome']);
    fireEvent.change(reasonOf(form, 2), { target: { value: 'BUSY' } });
    expect(optionsOf(reasonOf(form, 1))).toEqual(['NO_ANSWER', 'VOICEMAIL', 'ABANDONED', 'ERROR', 'NO_OUTCOME']);
    fireEvent.input(rule(form, 1).getByRole('spinbutton', { name: /Delay \(seconds\)/ }), { target: { value: '120' } });
    fireEvent.input(rule(form, 1).getByRole('spinbutton', { name: /Max attempts/ }), { target: { value: '2' } });
    fireEvent.input(rule(form, 2).getByRole('spinbutton', { name: /Max attempts/ }), { target: { value: '5' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0].retryRules).toEqual([
      { reason: 'NO_ANSWER', delaySeconds: 120, maxAttempts: 2 },
      { reason: 'BUSY', maxAttempts: 5 },
    ]);
  });

  it('removes a rule, and offers no more once every reason has one', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Rules');
    for (let i = 0; i < 6; i++) fireEvent.click(form.getByRole('button', { name: 'Add retry rule' }));
    expect(form.getAllByRole('group', { name: /^Retry rule \d+$/ })).toHaveLength(6);
    expect(form.queryByRole('button', { name: 'Add retry rule' })).toBeNull();
    fireEvent.click(form.getByRole('button', { name: 'Remove rule 2' }));
    expect(form.getAllByRole('group', { name: /^Retry rule \d+$/ })).toHaveLength(5);
    expect(form.getByRole('button', { name: 'Add retry rule' })).toBeTruthy();
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0].retryRules).toEqual([
      { reason: 'NO_ANSWER' },
      { reason: 'ABANDONED' },
      { reason: 'BUSY' },
      { reason: 'ERROR' },
      { reason: 'NO_OUTCOME' },
    ]);
  });

  it('refuses a blank name', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', '   ');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.getByRole('alert').textContent).toBe('Name is required.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('refuses a daily window with one end only, and takes it once both are given', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Half a window');
    type(form, 'Daily start time', '09:00');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.getByRole('alert').textContent).toBe('Give both a daily start time and a daily end time, or neither.');
    expect(onSubmit).not.toHaveBeenCalled();
    type(form, 'Daily end time', '17:00');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.queryByRole('alert')).toBeNull();
    expect(onSubmit).toHaveBeenCalledTimes(1);
  });

  it('asks for a data source when there is none', async () => {
    const { form, onSubmit } = await openForm({ sources: [] });
    type(form, 'Name', 'Nowhere to call');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.getByRole('alert').textContent).toBe('Choose a data source (create one first).');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('leaves a number outside its bounds to the browser, which does not submit it', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Too eager');
    type(form, 'Priority', '9');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(input(form, 'Priority').validity.rangeOverflow).toBe(true);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('cancels', async () => {
    const { form, onCancel, onSubmit } = await openForm();
    fireEvent.click(form.getByRole('button', { name: 'Cancel' }));
    expect(onCancel).toHaveBeenCalledTimes(1);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('shows a draft to edit with its values and rules, its data source fixed', async () => {
    const { form, onSubmit } = await openForm({ initial: DRAFT });
    expect(input(form, 'Name').value).toBe('Spring campaign');
    const ds = form.getByLabelText('Data source') as HTMLSelectElement;
    expect(ds.disabled).toBe(true);
    expect(ds.value).toBe('ds-2');
    expect(form.getByText('The data source of a task cannot change.')).toBeTruthy();
    expect(input(form, 'Priority').value).toBe('2');
    expect(input(form, 'Daily start time').value).toBe('09:00');
    expect(optionsOf(form.getByLabelText('Window time zone') as HTMLSelectElement)).toEqual(['CALLED_PARTY', 'TASK']);
    expect((form.getByLabelText('Window time zone') as HTMLSelectElement).value).toBe('TASK');
    expect(reasonOf(form, 1).value).toBe('BUSY');
    expect((rule(form, 1).getByRole('spinbutton', { name: /Delay/ }) as HTMLInputElement).value).toBe('300');
    expect(reasonOf(form, 2).value).toBe('NO_ANSWER');
    expect((rule(form, 2).getByRole('spinbutton', { name: /Delay/ }) as HTMLInputElement).value).toBe('');
    // Edited, an emptied window and time zone are sent empty (to clear them).
    type(form, 'Daily start time', '');
    type(form, 'Daily end time', '');
    type(form, 'Task time zone', '');
    fireEvent.click(form.getByRole('button', { name: 'Save' }));
    expect(onSubmit.mock.calls[0][0]).toEqual({
      taskName: 'Spring campaign',
      taskDesc: 'Five contacts',
      startAt: '',
      endAt: '',
      filter: [],
      dataSourceId: 'ds-2',
      priority: 2,
      maxDialCount: 4,
      callInterval: 120,
      retryRules: [{ reason: 'BUSY', delaySeconds: 300, maxAttempts: 2 }, { reason: 'NO_ANSWER' }],
      dailyStartTime: '',
      dailyEndTime: '',
      windowTimeZone: 'TASK',
      timeZone: '',
      callerId: '',
      contactFlowId: '',
      callAttributes: [],
      resultAttributes: [],
      voicemail: 'HANG_UP',
      dialingMode: 'AGENTLESS',
      queueId: '',
    });
  });
});

describe('what the pages send from the task form', () => {
  it('New task posts the form to /api/task/add and says the draft is created', async () => {
    const sent = fakeApi({
      'GET /api/dataSource/list': () => page(SOURCES),
      ...telephonyRoutes(),
      'GET /api/task/list': () => page([]),
      'POST /api/task/add': (one) => ({ ...DRAFT, ...(one.body as object), id: 'task-9' }),
    });
    render(<TasksPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'New task' }));
    const form = within(await screen.findByRole('form', { name: 'New task' }));
    await waitFor(() => expect((form.getByLabelText('Data source') as HTMLSelectElement).options.length).toBe(2));
    type(form, 'Name', 'Autumn campaign');
    fireEvent.click(form.getByRole('button', { name: 'Add retry rule' }));
    fireEvent.input(rule(form, 1).getByRole('spinbutton', { name: /Delay/ }), { target: { value: '600' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    const status = await screen.findByText(/created as a draft/);
    expect(status.closest('[role="status"]')?.textContent).toBe('Task “Autumn campaign” created as a draft. Open it to publish it.');
    expect(screen.getByRole('link', { name: 'Open it' }).getAttribute('href')).toBe('#/task/task-9');
    expect(sent.filter((s) => s.path === '/api/task/add').map((s) => s.body)).toEqual([
      {
        taskName: 'Autumn campaign',
        taskDesc: '',
        dataSourceId: 'ds-1',
        priority: 3,
        maxDialCount: 3,
        callInterval: 60,
        retryRules: [{ reason: 'NO_ANSWER', delaySeconds: 600 }],
      },
    ]);
    expect(screen.queryByRole('form', { name: 'New task' })).toBeNull();
  });

  it('Edit posts the draft to /api/task/update with its id and without its data source', async () => {
    const sent = fakeApi({
      'GET /api/dataSource/list': () => page(SOURCES),
      ...telephonyRoutes(),
      'POST /api/task/update': (one) => ({ ...DRAFT, ...(one.body as object) }),
    });
    const onChanged = vi.fn();
    render(<TaskActions task={DRAFT} onChanged={onChanged} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    const form = within(await screen.findByRole('form', { name: 'Edit task' }));
    type(form, 'Max dial count', '6');
    fireEvent.click(form.getByRole('button', { name: 'Remove rule 2' }));
    fireEvent.click(form.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('status')).textContent).toBe('The task is saved.');
    expect(sent.filter((s) => s.path === '/api/task/update').map((s) => s.body)).toEqual([
      {
        id: 'task-1',
        taskName: 'Spring campaign',
        taskDesc: 'Five contacts',
        startAt: '',
        endAt: '',
        filter: [],
        priority: 2,
        maxDialCount: 6,
        callInterval: 120,
        retryRules: [{ reason: 'BUSY', delaySeconds: 300, maxAttempts: 2 }],
        dailyStartTime: '09:00',
        dailyEndTime: '18:00',
        windowTimeZone: 'TASK',
        timeZone: 'Europe/Paris',
        callerId: '',
        contactFlowId: '',
        callAttributes: [],
        resultAttributes: [],
        voicemail: 'HANG_UP',
        dialingMode: 'AGENTLESS',
        queueId: '',
      },
    ]);
    expect(onChanged).toHaveBeenCalled();
    expect(screen.queryByRole('form', { name: 'Edit task' })).toBeNull();
  });

  it('shows the message of a refusal from the API and keeps the form', async () => {
    fakeApi({
      'GET /api/dataSource/list': () => page(SOURCES),
      ...telephonyRoutes(),
      'GET /api/task/list': () => page([]),
      'POST /api/task/add': () =>
        new Response(JSON.stringify({ code: 409, message: 'a task named Autumn campaign exists', data: null }), { status: 409 }),
    });
    render(<TasksPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'New task' }));
    const form = within(await screen.findByRole('form', { name: 'New task' }));
    await waitFor(() => expect((form.getByLabelText('Data source') as HTMLSelectElement).options.length).toBe(2));
    type(form, 'Name', 'Autumn campaign');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect((await screen.findByRole('alert')).textContent).toBe('a task named Autumn campaign exists');
    expect(screen.getByRole('form', { name: 'New task' })).toBeTruthy();
  });
});

const select = (form: Form, name: string) => form.getByRole('combobox', { name }) as HTMLSelectElement;
const choicesOf = (select: HTMLSelectElement) => [...select.options].map((o) => [o.value, o.textContent]);
const attributes = (form: Form) => within(form.getByRole('group', { name: 'Call attributes (optional)' }));
const attributeNames = (form: Form) => attributes(form).getAllByRole('checkbox').map((box) => box.parentElement?.textContent);
const resultName = (form: Form, n: number) => form.getByRole('textbox', { name: `Result name ${n}` }) as HTMLInputElement;
const addResult = (form: Form, name: string) => {
  fireEvent.click(form.getByRole('button', { name: 'Add result name' }));
  const inputs = form.getAllByRole('textbox', { name: /^Result name \d+$/ });
  fireEvent.input(inputs[inputs.length - 1], { target: { value: name } });
};

describe('task form telephony (D22)', () => {
  it('lists the tenant default, local presence and the tenant’s caller IDs and flows', async () => {
    const { form, sent } = await openForm();
    expect(choicesOf(select(form, 'Caller ID'))).toEqual([
      ['', 'Tenant default (+12125550100)'],
      ['LOCAL_PRESENCE', 'Local presence'],
      ['+12125550100', '+12125550100'],
      ['+442071838750', '+442071838750'],
    ]);
    expect(select(form, 'Caller ID').value).toBe('');
    expect(choicesOf(select(form, 'Contact flow'))).toEqual([
      ['', 'Tenant default (Survey)'],
      ['flow-remind', 'Order reminder'],
      ['flow-survey', 'Survey'],
    ]);
    expect(choicesOf(select(form, 'On voicemail'))).toEqual([
      ['HANG_UP', 'Hang up'],
      ['LEAVE_MESSAGE', 'Leave a message'],
    ]);
    expect(select(form, 'On voicemail').value).toBe('HANG_UP');
    // The fields a call may send: the known ones, then the custom ones of the first page of contacts.
    expect(sent.find((s) => s.path === '/api/dataSource/ds-1/contacts')?.query).toEqual({ pageNum: '1', pageSize: '100' });
    expect(attributeNames(form)).toEqual(['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164', 'orderId', 'plan']);
    expect(attributes(form).getAllByRole('checkbox').every((box) => !(box as HTMLInputElement).checked)).toBe(true);
    expect(form.queryAllByRole('textbox', { name: /^Result name \d+$/ })).toEqual([]);
  });

  it('offers the custom fields of the data source chosen', async () => {
    const { form } = await openForm();
    fireEvent.change(form.getByLabelText('Data source'), { target: { value: 'ds-2' } });
    await waitFor(() => expect(attributeNames(form)).toEqual(['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164', 'region']));
  });

  it('says when the tenant has no caller ID yet, and still offers the default and local presence', async () => {
    const none: Settings = { ...SETTINGS, callerIds: [], contactFlows: [], defaultCallerId: null, defaultContactFlowId: null };
    const { form } = await openForm({ settings: none });
    expect(choicesOf(select(form, 'Caller ID'))).toEqual([
      ['', 'Tenant default (not set)'],
      ['LOCAL_PRESENCE', 'Local presence'],
    ]);
    expect(choicesOf(select(form, 'Contact flow'))).toEqual([['', 'Tenant default (not set)']]);
    expect(form.getByText('No caller ID is assigned to your organisation yet: the operator assigns them.')).toBeTruthy();
  });

  it('sends nothing of the telephony a new task leaves at its defaults', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Defaults');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    const body = onSubmit.mock.calls[0][0];
    for (const key of ['callerId', 'contactFlowId', 'callAttributes', 'resultAttributes', 'voicemail']) expect(body).not.toHaveProperty(key);
  });

  it('sends the caller ID, flow, attributes, result names and voicemail chosen', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Telephony');
    fireEvent.change(select(form, 'Caller ID'), { target: { value: 'LOCAL_PRESENCE' } });
    fireEvent.change(select(form, 'Contact flow'), { target: { value: 'flow-remind' } });
    fireEvent.change(select(form, 'On voicemail'), { target: { value: 'LEAVE_MESSAGE' } });
    // Sent in the order offered, whatever the order ticked.
    fireEvent.click(attributes(form).getByRole('checkbox', { name: 'orderId' }));
    fireEvent.click(attributes(form).getByRole('checkbox', { name: 'e164' }));
    fireEvent.click(attributes(form).getByRole('checkbox', { name: 'customerName' }));
    expect(form.getByText('The contact fields each call sends its flow: 3 of at most 20 chosen.')).toBeTruthy();
    addResult(form, ' outcome ');
    addResult(form, 'callback_at');
    addResult(form, 'dropped');
    fireEvent.click(form.getByRole('button', { name: 'Remove result name 3' }));
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.queryByRole('alert')).toBeNull();
    expect(onSubmit.mock.calls[0][0]).toMatchObject({
      callerId: 'LOCAL_PRESENCE',
      contactFlowId: 'flow-remind',
      callAttributes: ['customerName', 'e164', 'orderId'],
      resultAttributes: ['outcome', 'callback_at'],
      voicemail: 'LEAVE_MESSAGE',
    });
  });

  it('sends one of the tenant’s numbers', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'From London');
    fireEvent.change(select(form, 'Caller ID'), { target: { value: '+442071838750' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0].callerId).toBe('+442071838750');
  });

  it('takes at most 20 call attributes: the rest are disabled until one is unticked', async () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i + 1}`, 'x']));
    CONTACTS['ds-3'] = [contact('c-9', many)];
    try {
      const { form, onSubmit } = await openForm({ sources: [...SOURCES, source('ds-3', 'Wide', 1)] });
      fireEvent.change(form.getByLabelText('Data source'), { target: { value: 'ds-3' } });
      await waitFor(() => expect(attributeNames(form)).toHaveLength(25));
      const boxes = () => attributes(form).getAllByRole('checkbox') as HTMLInputElement[];
      for (const box of boxes().slice(0, 20)) fireEvent.click(box);
      expect(form.getByText('The contact fields each call sends its flow: 20 of at most 20 chosen.')).toBeTruthy();
      expect(boxes().map((b) => b.disabled)).toEqual([...Array(20).fill(false), ...Array(5).fill(true)]);
      fireEvent.click(boxes()[21]);
      expect(boxes()[21].checked).toBe(false);
      fireEvent.click(boxes()[0]);
      expect(boxes().some((b) => b.disabled)).toBe(false);
      fireEvent.click(boxes()[24]);
      type(form, 'Name', 'Wide');
      fireEvent.click(form.getByRole('button', { name: 'Create' }));
      const sentNames = onSubmit.mock.calls[0][0].callAttributes ?? [];
      expect(sentNames).toHaveLength(20);
      expect(sentNames).not.toContain('customerName');
      expect(sentNames[19]).toBe('field20');
    } finally {
      delete CONTACTS['ds-3'];
    }
  });

  it.each([
    [['has space'], "resultAttributes[0] must be 1-32 letters, digits or '_'"],
    [['ok', ''], "resultAttributes[1] must be 1-32 letters, digits or '_'"],
    [['x'.repeat(33)], "resultAttributes[0] must be 1-32 letters, digits or '_'"],
    [['outcome', 'taskId'], "resultAttributes[1] 'taskId' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)"],
    [['outcome', ' outcome'], "resultAttributes[1] 'outcome' is listed twice"],
  ])('refuses the result names %j as the API would, and sends nothing', async (names, message) => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Results');
    for (const name of names) addResult(form, name);
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(form.getByRole('alert').textContent).toBe(message);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('takes at most 10 result names', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Ten results');
    for (let i = 1; i <= 10; i++) addResult(form, `r${i}`);
    expect(form.queryByRole('button', { name: 'Add result name' })).toBeNull();
    expect(resultName(form, 10).value).toBe('r10');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0].resultAttributes).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10']);
  });

  it('shows a draft’s telephony, keeps a field the data source no longer shows, and clears on edit', async () => {
    const draft: TaskView = {
      ...DRAFT,
      callerId: '+442071838750',
      contactFlowId: 'flow-remind',
      callAttributes: ['customerName', 'loyaltyTier'],
      resultAttributes: ['outcome'],
      voicemail: 'LEAVE_MESSAGE',
    };
    const { form, onSubmit } = await openForm({ initial: draft });
    expect(select(form, 'Caller ID').value).toBe('+442071838750');
    expect(select(form, 'Contact flow').value).toBe('flow-remind');
    expect(select(form, 'On voicemail').value).toBe('LEAVE_MESSAGE');
    expect(attributeNames(form)).toEqual(['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164', 'region', 'loyaltyTier']);
    const checked = (attributes(form).getAllByRole('checkbox') as HTMLInputElement[]).filter((b) => b.checked);
    expect(checked.map((b) => b.parentElement?.textContent)).toEqual(['customerName', 'loyaltyTier']);
    expect(resultName(form, 1).value).toBe('outcome');
    fireEvent.change(select(form, 'Caller ID'), { target: { value: '' } });
    fireEvent.change(select(form, 'Contact flow'), { target: { value: '' } });
    fireEvent.click(attributes(form).getByRole('checkbox', { name: 'loyaltyTier' }));
    fireEvent.click(form.getByRole('button', { name: 'Remove result name 1' }));
    fireEvent.click(form.getByRole('button', { name: 'Save' }));
    expect(onSubmit.mock.calls[0][0]).toMatchObject({
      callerId: '',
      contactFlowId: '',
      callAttributes: ['customerName'],
      resultAttributes: [],
      voicemail: 'LEAVE_MESSAGE',
    });
  });

  it('shows a draft’s number the tenant no longer lists', async () => {
    const { form } = await openForm({ initial: { ...DRAFT, callerId: '+15550001111' } });
    expect(select(form, 'Caller ID').value).toBe('+15550001111');
    expect(choicesOf(select(form, 'Caller ID'))[2]).toEqual(['+15550001111', '+15550001111']);
  });
});

const shown = (form: Form, label: string) => form.queryByLabelText(label) !== null;
/**
 * Submits the form as a browser does once its fields are valid. happy-dom checks a number's step
 * by a floating-point remainder (2 % 0.01 is not 0), so with the pacing numbers' step of 0.01 it
 * refuses every value a browser takes: a click on the submit button would send nothing.
 */
const submit = (form: Form) => fireEvent.submit(form.getByRole('button', { name: /^(Create|Save)$/ }).closest('form')!);

describe('task form dialing mode (D30)', () => {
  it('offers the dialing modes, agentless first and chosen, with no queue or pacing fields', async () => {
    const { form } = await openForm();
    expect(choicesOf(select(form, 'Dialing mode'))).toEqual([
      ['AGENTLESS', 'Agentless (the flow takes the call)'],
      ['PROGRESSIVE', 'Progressive (paced to free agents)'],
      ['PREDICTIVE', 'Predictive (dials ahead of agents)'],
    ]);
    expect(select(form, 'Dialing mode').value).toBe('AGENTLESS');
    for (const label of ['Queue', 'Calls per agent', 'Abandonment target (%)']) expect(shown(form, label), label).toBe(false);
  });

  it('shows the queue and the mode’s own number as the mode changes', async () => {
    const { form } = await openForm();
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    expect(choicesOf(select(form, 'Queue'))).toEqual([
      ['', 'Choose a queue'],
      ['q-renewals', 'Renewals team'],
      ['q-sales', 'Sales'],
    ]);
    expect(select(form, 'Queue').required).toBe(true);
    expect(input(form, 'Calls per agent').value).toBe('1');
    expect([input(form, 'Calls per agent').min, input(form, 'Calls per agent').max]).toEqual(['1', '3']);
    expect(shown(form, 'Abandonment target (%)')).toBe(false);
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-sales' } });
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PREDICTIVE' } });
    // The queue chosen stays; the number is the predictive one.
    expect(select(form, 'Queue').value).toBe('q-sales');
    expect(shown(form, 'Calls per agent')).toBe(false);
    expect(input(form, 'Abandonment target (%)').value).toBe('3');
    expect([input(form, 'Abandonment target (%)').min, input(form, 'Abandonment target (%)').max]).toEqual(['0', '10']);
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'AGENTLESS' } });
    for (const label of ['Queue', 'Calls per agent', 'Abandonment target (%)']) expect(shown(form, label), label).toBe(false);
  });

  it('sends nothing of the dialing mode for a new agentless task', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Agentless');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    const body = onSubmit.mock.calls[0][0];
    for (const key of ['dialingMode', 'queueId', 'callsPerAgent', 'abandonmentTarget']) expect(body).not.toHaveProperty(key);
  });

  it('sends a progressive task’s mode, queue and calls per agent, not the abandonment target', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Progressive');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-renewals' } });
    type(form, 'Calls per agent', '2');
    submit(form);
    expect(form.queryByRole('alert')).toBeNull();
    const body = onSubmit.mock.calls[0][0];
    expect(body).toMatchObject({ dialingMode: 'PROGRESSIVE', queueId: 'q-renewals', callsPerAgent: 2 });
    expect(body).not.toHaveProperty('abandonmentTarget');
  });

  it('sends a predictive task’s mode, queue and abandonment target, not calls per agent', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Predictive');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PREDICTIVE' } });
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-sales' } });
    type(form, 'Abandonment target (%)', '5');
    submit(form);
    const body = onSubmit.mock.calls[0][0];
    expect(body).toMatchObject({ dialingMode: 'PREDICTIVE', queueId: 'q-sales', abandonmentTarget: 5 });
    expect(body).not.toHaveProperty('callsPerAgent');
  });

  it('sends two decimals as typed (the API keeps two)', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'Decimals');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-sales' } });
    type(form, 'Calls per agent', '1.25');
    submit(form);
    expect(onSubmit.mock.calls[0][0]).toMatchObject({ dialingMode: 'PROGRESSIVE', queueId: 'q-sales', callsPerAgent: 1.25 });
  });

  it('leaves a paced task without a queue, or a number out of bounds, to the browser, which does not submit it', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'No queue');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(select(form, 'Queue').validity.valueMissing).toBe(true);
    expect(onSubmit).not.toHaveBeenCalled();
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-sales' } });
    type(form, 'Calls per agent', '4');
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(input(form, 'Calls per agent').validity.rangeOverflow).toBe(true);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('refuses a paced task without a queue by name, should the browser let it through', async () => {
    const { form, onSubmit } = await openForm();
    type(form, 'Name', 'No queue');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PREDICTIVE' } });
    submit(form);
    expect(form.getByRole('alert').textContent).toBe('Queue is required when the dialing mode is Predictive.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('says when the tenant has no queue yet', async () => {
    const { form } = await openForm({ settings: { ...SETTINGS, queues: [] } });
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    expect(choicesOf(select(form, 'Queue'))).toEqual([['', 'Choose a queue']]);
    expect(form.getByText('No agent queue is assigned to your organisation yet: the operator assigns them.')).toBeTruthy();
  });

  it('shows a paced draft with its queue and numbers, a queue the tenant no longer lists too', async () => {
    const draft: TaskView = { ...DRAFT, dialingMode: 'PREDICTIVE', queueId: 'q-gone', callsPerAgent: 1.5, abandonmentTarget: 2.5 };
    const { form } = await openForm({ initial: draft });
    expect(select(form, 'Dialing mode').value).toBe('PREDICTIVE');
    expect(choicesOf(select(form, 'Queue'))).toEqual([
      ['', 'Choose a queue'],
      ['q-gone', 'q-gone'],
      ['q-renewals', 'Renewals team'],
      ['q-sales', 'Sales'],
    ]);
    expect(select(form, 'Queue').value).toBe('q-gone');
    expect(input(form, 'Abandonment target (%)').value).toBe('2.5');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PROGRESSIVE' } });
    expect(input(form, 'Calls per agent').value).toBe('1.5');
  });

  it('edits a draft from paced to agentless: the mode sent, the queue cleared', async () => {
    const draft: TaskView = { ...DRAFT, dialingMode: 'PROGRESSIVE', queueId: 'q-renewals', callsPerAgent: 2 };
    const { form, onSubmit } = await openForm({ initial: draft });
    expect(select(form, 'Queue').value).toBe('q-renewals');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'AGENTLESS' } });
    fireEvent.click(form.getByRole('button', { name: 'Save' }));
    const body = onSubmit.mock.calls[0][0];
    expect(body).toMatchObject({ dialingMode: 'AGENTLESS', queueId: '' });
    expect(body).not.toHaveProperty('callsPerAgent');
    expect(body).not.toHaveProperty('abandonmentTarget');
  });

  it('New task posts a predictive task to /api/task/add', async () => {
    const sent = fakeApi({
      'GET /api/dataSource/list': () => page(SOURCES),
      ...telephonyRoutes(),
      'GET /api/task/list': () => page([]),
      'POST /api/task/add': (one) => ({ ...DRAFT, ...(one.body as object), id: 'task-9' }),
    });
    render(<TasksPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'New task' }));
    const form = within(await screen.findByRole('form', { name: 'New task' }));
    await waitFor(() => expect((form.getByLabelText('Data source') as HTMLSelectElement).options.length).toBe(2));
    await waitFor(() => expect(form.getByRole('combobox', { name: 'Caller ID' }).querySelectorAll('option').length).toBe(4));
    type(form, 'Name', 'Predictive campaign');
    fireEvent.change(select(form, 'Dialing mode'), { target: { value: 'PREDICTIVE' } });
    fireEvent.change(select(form, 'Queue'), { target: { value: 'q-renewals' } });
    type(form, 'Abandonment target (%)', '4');
    submit(form);
    await screen.findByText(/created as a draft/);
    expect(sent.filter((s) => s.path === '/api/task/add').map((s) => s.body)).toEqual([
      {
        taskName: 'Predictive campaign',
        taskDesc: '',
        dataSourceId: 'ds-1',
        priority: 3,
        maxDialCount: 3,
        callInterval: 60,
        retryRules: [],
        dialingMode: 'PREDICTIVE',
        queueId: 'q-renewals',
        abandonmentTarget: 4,
      },
    ]);
  });
});
