import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { Contact } from '../api/types';
import { contactStatusName, count, time } from '../format';
import { ErrorAlert, Status } from './Alert';
import { ContactForm, type ContactFields } from './ContactForm';
import { useAction, useCursor, useDebounced, useLoader } from './hooks';
import { PAGE_SIZE, Pager } from './Pager';
import { EmptyRow } from './EmptyRow';

const FIXED = new Set(['id', 'dataSourceId', 'phoneNumber', 'e164', 'customerName', 'address', 'orderAmount', 'status', 'callCount', 'createTime', 'updateTime']);

function customFields(c: Contact): string {
  return Object.entries(c)
    .filter(([k, v]) => !FIXED.has(k) && v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(', ');
}

/** The contacts of a data source: search, paging, add, edit, delete. `version` bumps reload it. */
export function Contacts(props: { dataSourceId: string; version: number; onChanged: () => void }) {
  const id = props.dataSourceId;
  const [search, setSearch] = useState('');
  const pages = useCursor();
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const phone = useDebounced(search.trim());
  const list = useLoader(() => API.listContacts(id, { pageNum: 1, nextToken: pages.token, pageSize: PAGE_SIZE, phoneNumber: phone }), [id, pages.token, phone, props.version]);
  const { busy, message, failure, run } = useAction(async () => {
    await list.reload();
    props.onChanged();
  });

  async function add(f: ContactFields) {
    const body = Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== ''));
    if (await run(() => API.addContact(id, body), `Contact ${f.phoneNumber} added.`)) setAdding(false);
  }

  async function save(c: Contact, f: ContactFields) {
    const changed: Record<string, string> = {};
    for (const [k, v] of Object.entries(f)) {
      if (v !== ((c as Record<string, unknown>)[k] ?? '')) changed[k] = v;
    }
    if (await run(() => API.updateContact(id, { contactId: c.id, ...changed }), `Contact ${f.phoneNumber} saved.`)) setEditing(null);
  }

  async function remove(c: Contact) {
    if (!window.confirm(`Delete the contact ${c.phoneNumber}?`)) return;
    await run(() => API.deleteContact(id, c.id), `Contact ${c.phoneNumber} deleted.`);
  }

  const rows = list.data?.rows ?? [];
  return (
    <section aria-labelledby="contacts-heading">
      <div class="page-head">
        <h2 id="contacts-heading">Contacts</h2>
        <button type="button" aria-expanded={adding} onClick={() => { setAdding(!adding); setEditing(null); }}>
          Add contact
        </button>
      </div>
      {adding && <ContactForm label="Add contact" submitLabel="Add" busy={busy} onSubmit={(f) => void add(f)} onCancel={() => setAdding(false)} />}
      <ErrorAlert error={failure?.error} />
      {message && <Status>{message}</Status>}
      <div class="toolbar">
        <label for="contact-search">Search by phone</label>
        <input id="contact-search" type="search" inputMode="tel" value={search} onInput={(e) => { setSearch(e.currentTarget.value); pages.reset(); }} />
      </div>
      <ErrorAlert error={list.error} />
      <div class="table-wrap">
        <table aria-busy={list.loading}>
          <caption class="visually-hidden">Contacts</caption>
          <thead>
            <tr>
              <th scope="col">Phone number</th>
              <th scope="col">E.164</th>
              <th scope="col">Customer name</th>
              <th scope="col">Address</th>
              <th scope="col">Order amount</th>
              <th scope="col">Other fields</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">Calls</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((c) =>
              editing === c.id ? (
                <tr key={c.id}>
                  <td colSpan={10}>
                    <ContactForm label={`Edit contact ${c.phoneNumber}`} initial={c} submitLabel="Save" busy={busy} onSubmit={(f) => void save(c, f)} onCancel={() => setEditing(null)} />
                  </td>
                </tr>
              ) : (
                <tr key={c.id}>
                  <th scope="row">{c.phoneNumber}</th>
                  <td>{c.e164 ?? '—'}</td>
                  <td>{c.customerName ?? '—'}</td>
                  <td>{c.address ?? '—'}</td>
                  <td>{c.orderAmount ?? '—'}</td>
                  <td>{customFields(c) || '—'}</td>
                  <td>{contactStatusName(c.status)}</td>
                  <td class="num">{count(c.callCount)}</td>
                  <td>{time(c.createTime)}</td>
                  <td class="actions">
                    <button type="button" class="secondary small" aria-label={`Edit ${c.phoneNumber}`} onClick={() => { setEditing(c.id); setAdding(false); }}>
                      Edit
                    </button>
                    <button type="button" class="danger small" aria-label={`Delete ${c.phoneNumber}`} disabled={busy} onClick={() => void remove(c)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ),
            )}
            <EmptyRow loading={list.loading} empty={rows.length === 0} error={list.error} columns={10}>
              {phone ? 'No contact matches this number.' : 'No contacts yet: add one or import a file.'}
            </EmptyRow>
          </tbody>
        </table>
      </div>
      {list.data && (
        <Pager label="Contacts" pageNum={pages.pageNum} pageSize={PAGE_SIZE} total={list.data.total} nextToken={list.data.nextToken} onNext={pages.next} onPrevious={pages.previous} />
      )}
    </section>
  );
}
