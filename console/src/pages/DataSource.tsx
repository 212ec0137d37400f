import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { ErrorAlert } from '../components/Alert';
import { Contacts } from '../components/Contacts';
import { ExportButtons } from '../components/ExportButtons';
import { useLoader, usePageTitle } from '../components/hooks';
import { ImportPanel } from '../components/ImportPanel';
import { count, time } from '../format';

export function DataSourcePage({ id }: { id: string }) {
  const detail = useLoader(() => API.getDataSource(id), [id]);
  const [version, setVersion] = useState(0);
  const ds = detail.data;
  usePageTitle(ds ? ds.dataSourceName : 'Data source');

  return (
    <>
      <section>
        <p>
          <a href="#/datasources">← Data sources</a>
        </p>
        <h1>{ds ? ds.dataSourceName : 'Data source'}</h1>
        <ErrorAlert error={detail.error} />
        {ds && (
          <dl class="details">
            <dt>Description</dt>
            <dd>{ds.dataSourceDesc || '—'}</dd>
            <dt>Contacts</dt>
            <dd>{count(ds.contactCount)}</dd>
            <dt>Default country</dt>
            <dd>{ds.defaultCountry ?? 'the tenant’s'}</dd>
            <dt>Created</dt>
            <dd>{time(ds.createTime)}</dd>
            <dt>Updated</dt>
            <dd>{time(ds.updateTime)}</dd>
            <dt>Id</dt>
            <dd>
              <code>{ds.id}</code>
            </dd>
          </dl>
        )}
      </section>
      {ds && (
        <>
          <div class="split">
          <section aria-labelledby="import-heading">
            <h2 id="import-heading">Import contacts</h2>
            <ImportPanel
              dataSourceId={id}
              onImported={() => {
                setVersion((v) => v + 1);
                void detail.reload();
              }}
            />
          </section>
          <section aria-labelledby="export-heading">
            <h2 id="export-heading">Export contacts</h2>
            <ExportButtons
              download={(format, redirect) => API.exportDataSource(id, format, redirect)}
              baseName="contacts"
              startJob={(format) => API.startDataSourceExportJob(id, format)}
            />
          </section>
          </div>
          <Contacts dataSourceId={id} version={version} onChanged={() => void detail.reload()} />
        </>
      )}
    </>
  );
}
