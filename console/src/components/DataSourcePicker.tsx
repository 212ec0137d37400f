import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { DataSource } from '../api/types';
import { count } from '../format';
import { ErrorAlert } from './Alert';
import { useDebounced, useLatest } from './hooks';
import { LOOKUP_PAGE_SIZE } from './Pager';

export interface DataSourcePages {
  /** The rows of the pages loaded so far, for the name asked. */
  rows: DataSource[];
  /** How many data sources match the name (all the pages). */
  total: number;
  loading: boolean;
  error: unknown;
  /** Loads the next page after those loaded; null once there is none. */
  more: (() => Promise<void>) | null;
}

/**
 * The data sources whose name contains `name` (all when blank), a page of LOOKUP_PAGE_SIZE at a
 * time (D5): the first page when `name` changes, the next one on `more`. A stale answer (for an
 * earlier name) never lands.
 */
export function useDataSourcePages(name: string, enabled = true): DataSourcePages {
  const [rows, setRows] = useState<DataSource[]>([]);
  const [total, setTotal] = useState(0);
  const [nextToken, setNextToken] = useState<string | null>(null);
  const { loading, error, run } = useLatest(enabled);

  const load = (token: string | undefined) =>
    run(
      () => API.listDataSources({ pageNum: 1, pageSize: LOOKUP_PAGE_SIZE, nextToken: token, dataSourceName: name || undefined }),
      (page) => {
        setRows((before) => (token ? [...before, ...page.rows] : page.rows));
        setTotal(page.total);
        setNextToken(page.nextToken ?? null);
      },
    );

  useEffect(() => {
    if (enabled) void load(undefined);
  }, [name, enabled]);

  return { rows, total, loading, error, more: nextToken && !loading ? () => load(nextToken) : null };
}

const label = (ds: DataSource) => `${ds.dataSourceName} (${ds.contactCount} contacts)`;

/**
 * The choice of a new task's data source among all the tenant's: a search by name (the API's
 * `dataSourceName` filter), the matching page in a select, and "Load more" for the next page.
 * Controlled: `value` is the id chosen ('' for none); `onChange` is called with the id shown
 * whenever it changes, the first match when the choice is not among the matches.
 */
export function DataSourcePicker(props: { id: string; value: string; onChange: (id: string) => void }) {
  const [search, setSearch] = useState('');
  const name = useDebounced(search.trim());
  const pages = useDataSourcePages(name);
  const { rows } = pages;
  const shown = rows.some((ds) => ds.id === props.value) ? props.value : (rows[0]?.id ?? '');
  // Until the first answer, keep the choice given; after it, what is shown is what is chosen.
  // (A layout effect: it runs as the matches render, before a choice made on them could be undone.)
  const answered = !pages.loading || rows.length > 0;
  useLayoutEffect(() => {
    if (answered && shown !== props.value) props.onChange(shown);
  }, [answered, shown, props.value]);

  const searchId = `${props.id}-search`;
  const statusId = `${props.id}-count`;
  return (
    <div class="field">
      <label for={props.id}>Data source</label>
      <input
        id={searchId}
        type="search"
        aria-label="Find a data source by name"
        aria-controls={props.id}
        placeholder="Find by name"
        value={search}
        onInput={(e) => setSearch(e.currentTarget.value)}
      />
      <select id={props.id} value={shown} aria-describedby={statusId} aria-busy={pages.loading} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {rows.map((ds) => (
          <option key={ds.id} value={ds.id}>
            {label(ds)}
          </option>
        ))}
      </select>
      <small id={statusId} role="status">
        {pages.loading && rows.length === 0
          ? 'Loading data sources…'
          : rows.length === 0
            ? name
              ? 'No data source matches this name.'
              : 'No data sources yet: create one first.'
            : `${count(rows.length)} of ${count(pages.total)} data sources shown.`}
      </small>
      {(pages.more || (pages.loading && rows.length > 0)) && (
        <button type="button" class="secondary small" disabled={!pages.more} onClick={() => void pages.more?.()}>
          {pages.more ? 'Load more data sources' : 'Loading…'}
        </button>
      )}
      <ErrorAlert error={pages.error} />
    </div>
  );
}

/** A task's data source, which cannot change: its name from its detail (its id until then). */
export function FixedDataSource(props: { id: string; dataSourceId: string }) {
  const [ds, setDs] = useState<DataSource | null>(null);
  useEffect(() => {
    let live = true;
    API.getDataSource(props.dataSourceId).then(
      (d) => live && setDs(d),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [props.dataSourceId]);
  return (
    <div class="field">
      <label for={props.id}>Data source</label>
      <select id={props.id} value={props.dataSourceId} disabled>
        <option value={props.dataSourceId}>{ds ? label(ds) : props.dataSourceId}</option>
      </select>
      <small>The data source of a task cannot change.</small>
    </div>
  );
}
