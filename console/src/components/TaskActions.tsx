import { useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { TaskStatus, type AddTask, type TaskView } from '../api/types';
import { navigate } from '../router';
import { ACTION_LABELS, actionsFor, type TaskAction } from '../state/taskActions';
import { ErrorAlert, Status } from './Alert';
import { RecallPicker } from './RecallPicker';
import { TaskForm } from './TaskForm';

/** The buttons the task's state allows (D10); a refusal (405) is explained. */
export function TaskActions(props: { task: TaskView; onChanged: () => void }) {
  const { task } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ error: unknown; action: TaskAction } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [reason, setReason] = useState('');
  const actions = actionsFor(task.status);

  async function run(action: TaskAction, work: () => Promise<string>) {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      setMessage(await work());
      props.onChanged();
    } catch (e) {
      setError({ error: e, action });
      props.onChanged();
    } finally {
      setBusy(false);
    }
  }

  function click(action: TaskAction) {
    switch (action) {
      case 'update':
        setEditing(!editing);
        return;
      case 'stop':
        return run('stop', async () => {
          await API.stopTask(task.id, reason.trim() || undefined);
          setReason('');
          return 'The task is stopped.';
        });
      case 'recall':
        return run('recall', async () => {
          const r = await API.recallTask(task.id);
          return r.recallCount === 0
            ? 'No failed or unanswered contact to recall.'
            : `Recalled ${r.recallCount} contact${r.recallCount === 1 ? '' : 's'}: they will be dialled again.`;
        });
      case 'delete':
        if (!window.confirm(`Delete the task “${task.taskName}”?`)) return;
        return run('delete', async () => {
          await API.taskAction('delete', task.id);
          navigate('#/tasks');
          return 'The task is deleted.';
        });
      default:
        return run(action, async () => {
          await API.taskAction(action, task.id);
          return `Done: ${ACTION_LABELS[action].toLowerCase()}.`;
        });
    }
  }

  async function save(body: AddTask) {
    const { dataSourceId: _ignored, ...rest } = body;
    await run('update', async () => {
      await API.updateTask({ id: task.id, ...rest });
      setEditing(false);
      return 'The task is saved.';
    });
  }

  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading" class="visually-hidden">
        Actions
      </h2>
      <div class="buttons">
        {actions.map((a) => (
          <button
            key={a}
            type="button"
            class={a === 'delete' ? 'danger' : a === 'update' ? 'secondary' : undefined}
            aria-expanded={a === 'update' ? editing : undefined}
            disabled={busy}
            onClick={() => void click(a)}
          >
            {ACTION_LABELS[a]}
          </button>
        ))}
        {actions.includes('stop') && (
          <label class="inline">
            Stop reason (optional){' '}
            <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
          </label>
        )}
      </div>
      {actions.includes('recall') && <RecallPicker taskId={task.id} onRecalled={props.onChanged} />}
      {actions.length === 0 && <p class="muted">A CLOSED task cannot change any more.</p>}
      <ErrorAlert error={error?.error} context={{ taskAction: error?.action }} />
      {message && <Status>{message}</Status>}
      {editing && task.status === TaskStatus.DRAFT && (
        <TaskForm label="Edit task" initial={task} submitLabel="Save" busy={busy} onSubmit={(b) => void save(b)} onCancel={() => setEditing(false)} />
      )}
    </section>
  );
}
