import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { DataSource } from '../api/types';
import { ErrorAlert, Status, type ErrorContext } from '../components/Alert';
import { DataSourceForm, type DataSourceFields } from '../components/DataSourceForm';
import { useAction, useCursor, useDebounced, useLoader, usePageTitle } from '../components/hooks';
import { PAGE_SIZE, Pager } from '../components/Pager';
import { count, time } from '../format';
import { EmptyRow } from '../components/EmptyRow';

export function DataSourcesPage() {
  usePageTitle('Data sources');
  const [search, setSearch] = useState('');
  const pages = useCursor();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const name = useDebounced(search.trim());
  const list = useLoader(() => API.listDataSources({ pageNum: 1, nextToken: pages.token, pageSize: PAGE_SIZE, dataSourceName: name }), [pages.token, name]);
  const { busy, message, failure, run } = useAction<ErrorContext>(list.reload);

  async function create(f: DataSourceFields) {
    const ok = await run(
      () =>
        API.addDataSource({
          dataSourceName: f.dataSourceName,
          dataSourceDesc: f.dataSourceDesc || undefined,
          defaultCountry: f.defaultCountry ?? undefined,
        }),
      `Data source “${f.dataSourceName}” created.`,
    );
    if (ok) setCreating(false);
  }

  async function save(ds: DataSource, f: DataSourceFields) {
    const ok = await run(
      () => API.updateDataSource({ id: ds.id, ...f }),
      `Data source “${f.dataSourceName}” saved.`,
    );
    if (ok) setEditing(null);
  }

  async function remove(ds: DataSource) {
    if (!window.confirm(`Delete the data source “${ds.dataSourceName}” and all its contacts?`)) return;
    await run(() => API.deleteDataSource(ds.id), `Data source “${ds.dataSourceName}” deleted.`, { dataSourceDelete: true });
  }

  const rows = list.data?.rows ?? [];
  return (
    <section>
      <div class="page-head">
        <h1>Data sources</h1>
        <button
          type="button"
          aria-expanded={creating}
          onClick={() => {
            setCreating(!creating);
            setEditing(null);
          }}
        >
          New data source
        </button>
      </div>
      {creating && (
        <DataSourceForm label="New data source" submitLabel="Create" busy={busy} onSubmit={create} onCancel={() => setCreating(false)} />
      )}
      <ErrorAlert error={failure?.error} context={failure?.context} />
      {message && <Status>{message}</Status>}
      <div class="toolbar">
        <label for="ds-search">Search by name</label>
        <input
          id="ds-search"
          type="search"
          value={search}
          onInput={(e) => {
            setSearch(e.currentTarget.value);
            pages.reset();
          }}
        />
      </div>
      <ErrorAlert error={list.error} />
      <div class="table-wrap">
        <table aria-busy={list.loading}>
          <caption class="visually-hidden">Data sources</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col" class="num">Contacts</th>
              <th scope="col">Default country</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((ds) =>
              editing === ds.id ? (
                <tr key={ds.id}>
                  <td colSpan={6}>
                    <DataSourceForm
                      label={`Edit ${ds.dataSourceName}`}
                      initial={ds}
                      submitLabel="Save"
                      busy={busy}
                      onSubmit={(f) => void save(ds, f)}
                      onCancel={() => setEditing(null)}
                    />
                  </td>
                </tr>
              ) : (
                <tr key={ds.id}>
                  <th scope="row">
                    <a href={`#/datasource/${encodeURIComponent(ds.id)}`}>{ds.dataSourceName}</a>
                  </th>
                  <td>{ds.dataSourceDesc || '—'}</td>
                  <td class="num">{count(ds.contactCount)}</td>
                  <td>{ds.defaultCountry ?? '—'}</td>
                  <td>{time(ds.createTime)}</td>
                  <td class="actions">
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Edit ${ds.dataSourceName}`}
                      onClick={() => {
                        setEditing(ds.id);
                        setCreating(false);
                      }}
                    >
                      Edit
                    </button>
                    <button type="button" class="danger small" aria-label={`Delete ${ds.dataSourceName}`} disabled={busy} onClick={() => void remove(ds)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ),
            )}
            <EmptyRow loading={list.loading} empty={rows.length === 0} error={list.error} columns={6}>
              {name ? 'No data source matches this search.' : 'No data sources yet: create one.'}
            </EmptyRow>
          </tbody>
        </table>
      </div>
      {list.data && (
        <Pager label="Data sources" pageNum={pages.pageNum} pageSize={PAGE_SIZE} total={list.data.total} nextToken={list.data.nextToken} onNext={pages.next} onPrevious={pages.previous} />
      )}
    </section>
  );
}
