import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { OutcomeFilter } from '../api/types';
import { csvRecords } from '../lib/csv';
import { ErrorAlert, Status } from './Alert';

/** Most failed contacts listed to choose from; a recall of all of them needs no list. */
const SHOWN = 500;

interface Failed {
  id: string;
  phoneNumber: string;
  lastReason: string;
  callCount: string;
}

/**
 * Recall of chosen contacts (D12): the task's failed and unanswered contacts (its export
 * filtered to UNSUCCESSFUL), each with a checkbox, then one recall of the ones ticked.
 */
export function RecallPicker(props: { taskId: string; onRecalled: () => void }) {
  const [failed, setFailed] = useState<Failed[] | null>(null);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);

  async function load() {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      const res = await API.exportTask(props.taskId, { format: 'csv', status: OutcomeFilter.UNSUCCESSFUL });
      const rows = csvRecords(await res.text()).map((r) => ({
        id: r.id,
        phoneNumber: r.phoneNumber,
        lastReason: r.lastReason,
        callCount: r.callCount,
      }));
      setFailed(rows);
      setChosen(new Set());
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  async function recall() {
    setBusy(true);
    setError(null);
    try {
      const r = await API.recallTask(props.taskId, [...chosen]);
      setMessage(`Recalled ${r.recallCount} contact${r.recallCount === 1 ? '' : 's'}: they will be dialled again.`);
      setFailed(null);
      props.onRecalled();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function toggle(id: string) {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChosen(next);
  }

  return (
    <div class="recall-picker">
      {failed === null ? (
        <button type="button" class="secondary" disabled={busy} onClick={() => void load()}>
          Choose contacts to recall
        </button>
      ) : failed.length === 0 ? (
        <p class="muted">No contact failed or went unanswered.</p>
      ) : (
        <fieldset>
          <legend>Failed or unanswered contacts ({failed.length})</legend>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Recall</th>
                  <th scope="col">Phone number</th>
                  <th scope="col">Last reason</th>
                  <th scope="col">Calls</th>
                </tr>
              </thead>
              <tbody>
                {failed.slice(0, SHOWN).map((f) => (
                  <tr key={f.id}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Recall ${f.phoneNumber}`}
                        checked={chosen.has(f.id)}
                        onChange={() => toggle(f.id)}
                      />
                    </td>
                    <td>{f.phoneNumber}</td>
                    <td>{f.lastReason}</td>
                    <td>{f.callCount}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {failed.length > SHOWN && <p class="muted">The first {SHOWN} are listed; "Recall failed" recalls them all.</p>}
          <div class="buttons">
            <button type="button" disabled={busy || chosen.size === 0} onClick={() => void recall()}>
              Recall selected ({chosen.size})
            </button>
            <button type="button" class="secondary" onClick={() => setFailed(null)}>
              Cancel
            </button>
          </div>
        </fieldset>
      )}
      <ErrorAlert error={error} context={{ taskAction: 'recall' }} />
      {message && <Status>{message}</Status>}
    </div>
  );
}
