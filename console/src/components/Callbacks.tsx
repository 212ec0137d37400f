import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { TaskStatus, type CallbackView, type TaskView } from '../api/types';
import { humanize } from '../format';
import { localInput, rfc3339 } from '../state/schedule';
import { ErrorAlert, Status } from './Alert';
import { useAction, useLoader } from './hooks';
import { LOOKUP_PAGE_SIZE } from './Pager';

/** Tasks that take a callback (D31): a COMPLETED one is dialled again for it. */
const TAKES_CALLBACKS: ReadonlySet<number> = new Set([TaskStatus.RUNNING, TaskStatus.PAUSED, TaskStatus.COMPLETED]);

/**
 * The task's callbacks (D31): those set by the API or asked for by the flow, each with its
 * status, a pending one cancelled here; and a form that promises a contact of the task's data
 * source a call at a time. `callbacks` come from the page's one poll.
 */
export function Callbacks(props: { task: TaskView; callbacks: CallbackView[] | null; onChanged: () => void }) {
  const { task } = props;
  const contacts = useLoader(() => API.listContacts(task.dataSourceId, { pageNum: 1, pageSize: LOOKUP_PAGE_SIZE }), [task.dataSourceId]);
  const [contactId, setContactId] = useState('');
  const [when, setWhen] = useState('');
  const { busy, message, failure, run, fail } = useAction(props.onChanged);
  const open = TAKES_CALLBACKS.has(task.status);
  const chosen = contactId || contacts.data?.rows[0]?.id || '';

  function submit(e: Event) {
    e.preventDefault();
    const at = rfc3339(when);
    if (!chosen) return fail(new Error('Choose a contact.'));
    if (!at) return fail(new Error('Give the time of the callback.'));
    void run(() => API.setCallback(task.id, chosen, at), 'Callback set.');
  }

  return (
    <section aria-labelledby="callbacks-heading">
      <h2 id="callbacks-heading">Callbacks</h2>
      <ErrorAlert error={failure?.error} />
      {message && <Status>{message}</Status>}
      {props.callbacks && props.callbacks.length > 0 ? (
        <table aria-labelledby="callbacks-heading">
          <thead>
            <tr>
              <th>Phone number</th>
              <th>At</th>
              <th>Set by</th>
              <th>Status</th>
              <th>Reason</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.callbacks.map((c, i) => (
              <tr key={`${c.contactId}-${i}`}>
                <td>{c.phoneNumber}</td>
                <td>{localInput(c.at).replace('T', ' ')}</td>
                <td>{c.source === 'FLOW' ? 'The flow' : 'The API'}</td>
                <td>{humanize(c.status)}</td>
                <td>{c.reason ? humanize(c.reason) : '—'}</td>
                <td>
                  {c.status === 'PENDING' && open && (
                    <button type="button" class="secondary small" disabled={busy} onClick={() => void run(() => API.cancelCallback(task.id, c.contactId), 'Callback cancelled.')}>
                      Cancel callback to {c.phoneNumber}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">{props.callbacks ? 'No callbacks.' : 'Loading…'}</p>
      )}
      {open && (
        <form class="buttons" aria-label="Set a callback" onSubmit={submit}>
          <label>
            Contact{' '}
            <select value={chosen} onChange={(e) => setContactId(e.currentTarget.value)}>
              {(contacts.data?.rows ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.phoneNumber}
                  {c.customerName ? ` (${c.customerName})` : ''}
                </option>
              ))}
            </select>
          </label>
          <label>
            Call back at <input type="datetime-local" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={busy}>
            Set callback
          </button>
        </form>
      )}
    </section>
  );
}
