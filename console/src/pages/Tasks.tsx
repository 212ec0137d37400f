import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { AddTask } from '../api/types';
import { ErrorAlert, Status } from '../components/Alert';
import { useCursor, useDebounced, useLoader, usePageTitle } from '../components/hooks';
import { PAGE_SIZE, Pager } from '../components/Pager';
import { StatusBadge } from '../components/StatusBadge';
import { TaskForm } from '../components/TaskForm';
import { count, statusName, TASK_STATUSES, time } from '../format';
import { EmptyRow } from '../components/EmptyRow';
import { useDataSourceNames } from '../components/dataSourceNames';

export function TasksPage() {
  usePageTitle('Tasks');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('');
  const pages = useCursor();
  const [creating, setCreating] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ id: string; name: string } | null>(null);
  const taskName = useDebounced(search.trim());
  const list = useLoader(
    () => API.listTasks({ pageNum: 1, nextToken: pages.token, pageSize: PAGE_SIZE, taskName, status: status === '' ? undefined : Number(status) }),
    [pages.token, taskName, status],
  );

  async function create(body: AddTask) {
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      const task = await API.addTask(body);
      setCreated({ id: task.id, name: task.taskName });
      setCreating(false);
      await list.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  const rows = list.data?.rows ?? [];
  // The names of the data sources of the tasks shown, however deep in the tenant's list.
  const sourceNames = useDataSourceNames(rows.map((t) => t.dataSourceId));
  return (
    <section>
      <div class="page-head">
        <h1>Tasks</h1>
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          New task
        </button>
      </div>
      {creating && <TaskForm label="New task" submitLabel="Create" busy={busy} onSubmit={(b) => void create(b)} onCancel={() => setCreating(false)} />}
      <ErrorAlert error={error} />
      {created && (
        <Status>
          Task “{created.name}” created as a draft. <a href={`#/task/${encodeURIComponent(created.id)}`}>Open it</a> to publish it.
        </Status>
      )}
      <div class="toolbar">
        <label for="task-status">Status</label>
        <select id="task-status" value={status} onChange={(e) => { setStatus(e.currentTarget.value); pages.reset(); }}>
          <option value="">All</option>
          {TASK_STATUSES.map((s) => (
            <option key={s} value={String(s)}>
              {statusName(s)}
            </option>
          ))}
        </select>
        <label for="task-search">Search by name</label>
        <input id="task-search" type="search" value={search} onInput={(e) => { setSearch(e.currentTarget.value); pages.reset(); }} />
      </div>
      <ErrorAlert error={list.error} />
      <div class="table-wrap">
        <table aria-busy={list.loading}>
          <caption class="visually-hidden">Tasks</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Data source</th>
              <th scope="col" class="num">Contacts</th>
              <th scope="col" class="num">Calls</th>
              <th scope="col" class="num">Successes</th>
              <th scope="col">Created</th>
              <th scope="col">Started</th>
              <th scope="col">Ended</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.id}>
                <th scope="row">
                  <a href={`#/task/${encodeURIComponent(t.id)}`}>{t.taskName}</a>
                </th>
                <td>
                  <StatusBadge status={t.status} />
                </td>
                <td>
                  <a href={`#/datasource/${encodeURIComponent(t.dataSourceId)}`}>{sourceNames.get(t.dataSourceId) ?? 'Data source'}</a>
                </td>
                <td class="num">{count(t.contactCount)}</td>
                <td class="num">{count(t.callCount)}</td>
                <td class="num">{count(t.successCount)}</td>
                <td>{time(t.createTime)}</td>
                <td>{time(t.startTime)}</td>
                <td>{time(t.endTime)}</td>
              </tr>
            ))}
            <EmptyRow loading={list.loading} empty={rows.length === 0} error={list.error} columns={9}>
              {taskName || status ? 'No task matches these filters.' : 'No tasks yet: create one.'}
            </EmptyRow>
          </tbody>
        </table>
      </div>
      {list.data && (
        <Pager label="Tasks" pageNum={pages.pageNum} pageSize={PAGE_SIZE} total={list.data.total} nextToken={list.data.nextToken} onNext={pages.next} onPrevious={pages.previous} />
      )}
    </section>
  );
}
