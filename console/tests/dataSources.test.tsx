// @vitest-environment happy-dom
// Data sources beyond the first page (D5): the task form's picker searches them by name and pages
// through them, the task list names each task's data source however deep it is, and the lists
// say when they are loading and when they are empty.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { useState } from 'preact/hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AddTask, DataSource, Settings, TaskView } from '../src/api/types';
import { DataSourcePicker } from '../src/components/DataSourcePicker';
import { dataSourceNames } from '../src/components/dataSourceNames';
import { LOOKUP_PAGE_SIZE } from '../src/components/Pager';
import { TaskForm } from '../src/components/TaskForm';
import { DataSourcesPage } from '../src/pages/DataSources';
import { TasksPage } from '../src/pages/Tasks';
import { fakeApi, type Sent } from './support/fakeApi';

const source = (n: number): DataSource => ({
  id: `ds-${n}`,
  dataSourceName: `Source ${n}`,
  dataSourceDesc: '',
  contactCount: n,
  defaultCountry: null,
  createTime: '2030-01-01T00:00:00Z',
  updateTime: '2030-01-01T00:00:00Z',
});

/** A tenant with 250 data sources. */
const MANY = Array.from({ length: 250 }, (_, i) => source(i + 1));

/** The list route as the API answers it: filtered by name (contains, any case), paged by a token. */
function listRoute(all: DataSource[]) {
  return (sent: Sent) => {
    const name = (sent.query.dataSourceName ?? '').toLowerCase();
    const matches = all.filter((ds) => ds.dataSourceName.toLowerCase().includes(name));
    const size = Number(sent.query.pageSize ?? 20);
    const from = Number(sent.query.nextToken ?? 0);
    const rows = matches.slice(from, from + size);
    return { total: matches.length, rows, nextToken: from + size < matches.length ? String(from + size) : null };
  };
}

const detailRoutes = (all: DataSource[]) => Object.fromEntries(all.map((ds) => [`GET /api/dataSource/detail/${ds.id}`, () => ds]));

const task = (id: string, dataSourceId: string): TaskView =>
  ({
    id,
    taskName: `Task ${id}`,
    taskDesc: '',
    status: 0,
    dataSourceId,
    contactCount: 0,
    callCount: 0,
    successCount: 0,
    createTime: '2030-01-01T00:00:00Z',
  }) as unknown as TaskView;

const SETTINGS: Settings = {
  defaultCountry: 'US',
  callingHours: null,
  frequencyCap: null,
  updateTime: null,
  callerIds: [],
  contactFlows: [],
  queues: [],
  defaultCallerId: null,
  defaultContactFlowId: null,
};

afterEach(cleanup);

/** The picker alone, as the task form holds it: its choice in a state, each change kept. */
function Picked(props: { onChange: (id: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <DataSourcePicker
      id="ds"
      value={value}
      onChange={(id) => {
        props.onChange(id);
        setValue(id);
      }}
    />
  );
}

const options = () => [...(screen.getByRole('combobox', { name: 'Data source' }) as HTMLSelectElement).options];
const chosen = () => (screen.getByRole('combobox', { name: 'Data source' }) as HTMLSelectElement).value;
const lists = (sent: Sent[]) => sent.filter((s) => s.path === '/api/dataSource/list').map((s) => s.query);

describe('data-source picker', () => {
  it('pages past the first 100 with Load more, then stops', async () => {
    const sent = fakeApi({ 'GET /api/dataSource/list': listRoute(MANY) });
    const onChange = vi.fn();
    render(<Picked onChange={onChange} />);
    await waitFor(() => expect(options()).toHaveLength(100));
    expect(lists(sent)).toEqual([{ pageNum: '1', pageSize: String(LOOKUP_PAGE_SIZE) }]);
    expect(chosen()).toBe('ds-1');
    expect(onChange).toHaveBeenLastCalledWith('ds-1');
    expect(screen.getByText('100 of 250 data sources shown.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Load more data sources' }));
    await waitFor(() => expect(options()).toHaveLength(200));
    fireEvent.click(screen.getByRole('button', { name: 'Load more data sources' }));
    await waitFor(() => expect(options()).toHaveLength(250));
    expect(lists(sent).slice(1)).toEqual([
      { pageNum: '1', pageSize: '100', nextToken: '100' },
      { pageNum: '1', pageSize: '100', nextToken: '200' },
    ]);
    expect(options()[249].textContent).toBe('Source 250 (250 contacts)');
    expect(screen.getByText('250 of 250 data sources shown.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Load more data sources' })).toBeNull();
    // A choice from the last page holds.
    fireEvent.change(screen.getByRole('combobox', { name: 'Data source' }), { target: { value: 'ds-230' } });
    expect(onChange).toHaveBeenLastCalledWith('ds-230');
    expect(chosen()).toBe('ds-230');
  });

  it('asks the API for the names typed, keeps a choice that still matches, else takes the first match', async () => {
    const sent = fakeApi({ 'GET /api/dataSource/list': listRoute(MANY) });
    const onChange = vi.fn();
    render(<Picked onChange={onChange} />);
    await waitFor(() => expect(options()).toHaveLength(100));
    const search = screen.getByRole('searchbox', { name: 'Find a data source by name' });

    fireEvent.input(search, { target: { value: ' Source 23 ' } });
    await waitFor(() => expect(options()).toHaveLength(11));
    expect(lists(sent).at(-1)).toEqual({ pageNum: '1', pageSize: '100', dataSourceName: 'Source 23' });
    expect(options().map((o) => o.value)).toEqual(['ds-23', ...Array.from({ length: 10 }, (_, i) => `ds-${230 + i}`)]);
    expect(screen.getByText('11 of 11 data sources shown.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Load more data sources' })).toBeNull();
    fireEvent.change(screen.getByRole('combobox', { name: 'Data source' }), { target: { value: 'ds-236' } });
    expect(chosen()).toBe('ds-236');

    // Still among the matches: kept.
    fireEvent.input(search, { target: { value: 'source 236' } });
    await waitFor(() => expect(options()).toHaveLength(1));
    expect(chosen()).toBe('ds-236');

    // No longer among them: the first match is the one chosen.
    fireEvent.input(search, { target: { value: 'Source 7' } });
    await waitFor(() => expect(options()[0]?.value).toBe('ds-7'));
    expect(chosen()).toBe('ds-7');
    expect(onChange).toHaveBeenLastCalledWith('ds-7');

    fireEvent.input(search, { target: { value: 'nothing like it' } });
    await waitFor(() => expect(screen.getByText('No data source matches this name.')).toBeTruthy());
    expect(options()).toHaveLength(0);
    expect(onChange).toHaveBeenLastCalledWith('');
  });

  it('a new task takes a data source found by name beyond the first 100', async () => {
    fakeApi({ 'GET /api/dataSource/list': listRoute(MANY), 'GET /api/settings': () => SETTINGS });
    const onSubmit = vi.fn<(body: AddTask) => void>();
    render(<TaskForm label="New task" submitLabel="Create" busy={false} onSubmit={onSubmit} onCancel={() => {}} />);
    const form = within(await screen.findByRole('form', { name: 'New task' }));
    await waitFor(() => expect(options()).toHaveLength(100));
    fireEvent.input(form.getByRole('searchbox', { name: 'Find a data source by name' }), { target: { value: 'Source 249' } });
    await waitFor(() => expect(options().map((o) => o.value)).toEqual(['ds-249']));
    fireEvent.input(form.getByLabelText('Name'), { target: { value: 'Deep' } });
    fireEvent.click(form.getByRole('button', { name: 'Create' }));
    expect(onSubmit.mock.calls[0][0].dataSourceId).toBe('ds-249');
  });

  it('says it is loading until the first page answers', async () => {
    let answer!: (rows: unknown) => void;
    fakeApi({ 'GET /api/dataSource/list': () => new Promise((resolve) => (answer = resolve)) });
    render(<Picked onChange={() => {}} />);
    expect((await screen.findByText('Loading data sources…')).getAttribute('role')).toBe('status');
    expect(screen.getByRole('combobox', { name: 'Data source' }).getAttribute('aria-busy')).toBe('true');
    answer({ total: 0, rows: [], nextToken: null });
    await screen.findByText('No data sources yet: create one first.');
    expect(screen.getByRole('combobox', { name: 'Data source' }).getAttribute('aria-busy')).toBe('false');
  });
});

describe('task list data-source names', () => {
  it('names a data source beyond the first page by its detail, and asks nothing twice', async () => {
    const sent = fakeApi({
      'GET /api/dataSource/list': listRoute(MANY),
      ...detailRoutes(MANY),
      'GET /api/task/list': () => ({ total: 3, rows: [task('t-1', 'ds-2'), task('t-2', 'ds-180'), task('t-3', 'ds-180')], nextToken: null }),
    });
    render(<TasksPage />);
    await waitFor(() => expect(screen.getAllByRole('link', { name: 'Source 180' })).toHaveLength(2));
    const table = within(screen.getByRole('table', { name: 'Tasks' }));
    const row = (name: string) => within(table.getByRole('link', { name }).closest('tr')!);
    expect(row('Task t-1').getByRole('link', { name: 'Source 2' }).getAttribute('href')).toBe('#/datasource/ds-2');
    expect(row('Task t-2').getByRole('link', { name: 'Source 180' })).toBeTruthy();
    expect(row('Task t-3').getByRole('link', { name: 'Source 180' })).toBeTruthy();
    // One page of the newest names most; only the one it did not name is looked up.
    expect(sent.filter((s) => s.path.startsWith('/api/dataSource/')).map((s) => s.path)).toEqual([
      '/api/dataSource/list',
      '/api/dataSource/detail/ds-180',
    ]);
  });

  it('resolves each id past the first page, and leaves out one that is gone', async () => {
    const sent = fakeApi({ 'GET /api/dataSource/list': listRoute(MANY), ...detailRoutes(MANY) });
    const names = await dataSourceNames(['ds-5', 'ds-101', 'ds-250', 'ds-gone', 'ds-101'], true);
    expect(names.get('ds-5')).toBe('Source 5');
    expect(names.get('ds-101')).toBe('Source 101');
    expect(names.get('ds-250')).toBe('Source 250');
    expect(names.has('ds-gone')).toBe(false);
    expect(sent.filter((s) => s.path.includes('/detail/')).map((s) => s.path).sort()).toEqual([
      '/api/dataSource/detail/ds-101',
      '/api/dataSource/detail/ds-250',
      '/api/dataSource/detail/ds-gone',
    ]);
  });
});

describe('list loading and empty states', () => {
  it('the data sources list says it is loading, then that it is empty', async () => {
    let answer!: (page: unknown) => void;
    fakeApi({ 'GET /api/dataSource/list': () => new Promise((resolve) => (answer = resolve)) });
    render(<DataSourcesPage />);
    const table = screen.getByRole('table', { name: 'Data sources' });
    expect(table.getAttribute('aria-busy')).toBe('true');
    const loading = within(table).getByRole('status');
    expect(loading.textContent).toBe('Loading…');
    expect(loading.closest('tr')?.getAttribute('aria-busy')).toBe('true');
    // The headers stay as they are while it loads.
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual([
      'Name',
      'Description',
      'Contacts',
      'Default country',
      'Created',
      'Actions',
    ]);
    answer({ total: 0, rows: [], nextToken: null });
    await within(table).findByText('No data sources yet: create one.');
    expect(table.getAttribute('aria-busy')).toBe('false');
    expect(within(table).queryByRole('status')).toBeNull();
  });

  it('the tasks list says it is loading, then that there are none', async () => {
    let answer!: (page: unknown) => void;
    fakeApi({ 'GET /api/task/list': () => new Promise((resolve) => (answer = resolve)) });
    render(<TasksPage />);
    const table = screen.getByRole('table', { name: 'Tasks' });
    expect(within(table).getByRole('status').textContent).toBe('Loading…');
    answer({ total: 0, rows: [], nextToken: null });
    await within(table).findByText('No tasks yet: create one.');
    expect(within(table).queryByText('Loading…')).toBeNull();
  });

  it('a list whose load fails shows its error, not that it is empty', async () => {
    fakeApi({});
    render(<DataSourcesPage />);
    await screen.findByRole('alert');
    const table = screen.getByRole('table', { name: 'Data sources' });
    expect(within(table).queryByText('No data sources yet: create one.')).toBeNull();
    expect(within(table).queryByText('Loading…')).toBeNull();
    expect(within(table).getAllByRole('row')).toHaveLength(1);
  });
});
