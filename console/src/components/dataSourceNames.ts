import { useEffect, useRef, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { LOOKUP_PAGE_SIZE } from './Pager';

/**
 * The names of the data sources `ids`, however many the tenant holds: one page of the newest
 * (LOOKUP_PAGE_SIZE, which names most at once) when `listFirst`, then the detail of each id it
 * did not name. An id whose detail fails (a deleted data source) is left out.
 */
export async function dataSourceNames(ids: readonly string[], listFirst: boolean): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (listFirst) {
    try {
      const page = await API.listDataSources({ pageNum: 1, pageSize: LOOKUP_PAGE_SIZE });
      for (const ds of page.rows) found.set(ds.id, ds.dataSourceName);
    } catch {
      // Each id is looked up on its own below.
    }
  }
  const missing = [...new Set(ids)].filter((id) => !found.has(id));
  const details = await Promise.all(
    missing.map((id) =>
      API.getDataSource(id).then(
        (ds) => [id, ds.dataSourceName] as const,
        () => null,
      ),
    ),
  );
  for (const d of details) if (d) found.set(d[0], d[1]);
  return found;
}

/** The names of the data sources `ids` (those resolved so far), each id asked once per mount. */
export function useDataSourceNames(ids: readonly string[]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const listed = useRef(false);
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);
  const key = [...new Set(ids)].sort().join('\n');
  useEffect(() => {
    const wanted = key ? key.split('\n').filter((id) => !asked.current.has(id)) : [];
    if (wanted.length === 0) return;
    for (const id of wanted) asked.current.add(id);
    const listFirst = !listed.current;
    listed.current = true;
    void dataSourceNames(wanted, listFirst).then((found) => {
      if (live.current && found.size > 0) setNames((before) => new Map([...before, ...found]));
    });
  }, [key]);
  return names;
}
