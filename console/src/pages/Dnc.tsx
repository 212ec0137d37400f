import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { Dnc, ImportReport } from '../api/types';
import { isAdmin, type Identity } from '../auth/claims';
import { ErrorAlert, Status } from '../components/Alert';
import { useAction, useCursor, useDebounced, useLoader, usePageTitle } from '../components/hooks';
import { ImportReportView } from '../components/ImportReport';
import { PAGE_SIZE, Pager } from '../components/Pager';
import { time } from '../format';
import { EmptyRow } from '../components/EmptyRow';

export function DncPage(props: {
  /** Who the token names: a member not in `admins` is offered no Delete (display only). */
  identity: Identity | null;
}) {
  usePageTitle('Do-not-call list');
  const canDelete = isAdmin(props.identity);
  const [search, setSearch] = useState('');
  const pages = useCursor();
  const [phone, setPhone] = useState('');
  const [reason, setReason] = useState('');
  const [country, setCountry] = useState('');
  const [report, setReport] = useState<ImportReport | null>(null);
  const filter = useDebounced(search.trim());
  const list = useLoader(() => API.listDnc({ pageNum: 1, nextToken: pages.token, pageSize: PAGE_SIZE, phoneNumber: filter }), [pages.token, filter]);
  const { busy, message, failure, run, fail } = useAction(list.reload);

  async function add(e: Event) {
    e.preventDefault();
    if (!phone.trim()) {
      return fail(new Error('Give the phone number to list.'));
    }
    const ok = await run(async () => {
      const entry = await API.addDnc({
        phoneNumber: phone.trim(),
        country: country.trim().toUpperCase() || undefined,
        reason: reason.trim() || undefined,
      });
      return `${entry.phoneNumber} will never be called.`;
    });
    if (ok) {
      setPhone('');
      setCountry('');
      setReason('');
    }
  }

  async function remove(entry: Dnc) {
    if (!window.confirm(`Remove ${entry.phoneNumber} from the do-not-call list?`)) return;
    await run(async () => {
      // By its E.164 form: the number in the country it was listed in.
      await API.deleteDnc(entry.e164 ?? entry.phoneNumber);
      return `${entry.phoneNumber} removed from the list.`;
    });
  }

  async function upload(file: File | undefined) {
    if (!file) return;
    setReport(null);
    await run(async () => {
      const r = await API.importDnc(file);
      setReport(r);
      return `${file.name}: ${r.successCount} of ${r.importCount} numbers listed.`;
    });
  }

  const rows = list.data?.rows ?? [];
  return (
    <section>
      <h1>Do-not-call list</h1>
      <p class="muted">Numbers on this list are never called by any task (matched on the number's E.164 form: a number written without + is read in the country given, else the tenant's default country).</p>
      <form class="card form-grid" aria-label="Add a number" onSubmit={add}>
        <div class="field">
          <label for="dnc-phone">Phone number</label>
          <input id="dnc-phone" type="tel" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="dnc-country">Country</label>
          <input id="dnc-country" maxLength={2} placeholder="default" value={country} onInput={(e) => setCountry(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="dnc-reason">Reason</label>
          <input id="dnc-reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </div>
        <div class="buttons">
          <button type="submit" disabled={busy}>
            Add to list
          </button>
        </div>
      </form>
      <div class="card stack">
        <label for="dnc-file">Import numbers from a file</label>
        <input
          id="dnc-file"
          type="file"
          accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          disabled={busy}
          onChange={(e) => {
            void upload(e.currentTarget.files?.[0]);
            e.currentTarget.value = '';
          }}
        />
        <small>A CSV or Excel file with a phone column (phoneNumber, phone, mobile) and optional reason and country columns.</small>
      </div>
      <ErrorAlert error={failure?.error} />
      {message && <Status>{message}</Status>}
      {report && <ImportReportView report={report} />}
      <div class="toolbar">
        <label for="dnc-search">Search by phone</label>
        <input id="dnc-search" type="search" value={search} onInput={(e) => { setSearch(e.currentTarget.value); pages.reset(); }} />
      </div>
      <ErrorAlert error={list.error} />
      {!canDelete && (
        <p id="dnc-delete-note" class="muted">
          Only members of the group admins can delete numbers from the list.
        </p>
      )}
      <div class="table-wrap">
        <table aria-busy={list.loading} aria-describedby={canDelete ? undefined : 'dnc-delete-note'}>
          <caption class="visually-hidden">Listed numbers</caption>
          <thead>
            <tr>
              <th scope="col">Phone number</th>
              <th scope="col">E.164</th>
              <th scope="col">Country</th>
              <th scope="col">Reason</th>
              <th scope="col">Listed</th>
              {canDelete && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.e164 ?? d.phoneNumber}>
                <th scope="row">{d.phoneNumber}</th>
                <td>{d.e164 ?? '—'}</td>
                <td>{d.country ?? '—'}</td>
                <td>{d.reason || '—'}</td>
                <td>{time(d.createTime)}</td>
                {canDelete && (
                  <td class="actions">
                    <button type="button" class="danger small" aria-label={`Delete ${d.phoneNumber}`} disabled={busy} onClick={() => void remove(d)}>
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            <EmptyRow loading={list.loading} empty={rows.length === 0} error={list.error} columns={canDelete ? 6 : 5}>
              {filter ? 'No listed number matches.' : 'The list is empty.'}
            </EmptyRow>
          </tbody>
        </table>
      </div>
      {list.data && (
        <Pager label="Do-not-call list" pageNum={pages.pageNum} pageSize={PAGE_SIZE} total={list.data.total} nextToken={list.data.nextToken} onNext={pages.next} onPrevious={pages.previous} />
      )}
    </section>
  );
}
