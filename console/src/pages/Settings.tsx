import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { isAdmin, type Identity } from '../auth/claims';
import { ErrorAlert, Status } from '../components/Alert';
import { useLoader, usePageTitle } from '../components/hooks';
import { formFromSettings, settingsUpdate, type SettingsForm } from '../state/settingsDiff';

export function SettingsPage(props: {
  /** Who the token names: a member not in `admins` sees the settings read-only (display only). */
  identity: Identity | null;
}) {
  usePageTitle('Settings');
  const readOnly = !isAdmin(props.identity);
  const settings = useLoader(() => API.getSettings(), []);
  const [form, setForm] = useState<SettingsForm | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  useEffect(() => {
    if (settings.data) setForm(formFromSettings(settings.data));
  }, [settings.data]);

  async function submit(e: Event) {
    e.preventDefault();
    if (!form || !settings.data || readOnly) return;
    setError(null);
    setMessage(null);
    const result = settingsUpdate(settings.data, form);
    if ('error' in result) return setError(new Error(result.error));
    if (Object.keys(result.body).length === 0) return setMessage('Nothing changed.');
    setBusy(true);
    try {
      await API.updateSettings(result.body);
      await settings.reload();
      setMessage('Settings saved.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const field = (key: keyof SettingsForm, label: string, type: string, extra: Record<string, unknown> = {}) =>
    form && (
      <div class="field">
        <label for={`settings-${key}`}>{label}</label>
        <input
          id={`settings-${key}`}
          type={type as 'text'}
          value={form[key]}
          disabled={readOnly}
          onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })}
          {...extra}
        />
      </div>
    );

  const choice = (key: 'defaultCallerId' | 'defaultContactFlowId', label: string, options: [string, string][]) =>
    form && (
      <div class="field">
        <label for={`settings-${key}`}>{label}</label>
        <select id={`settings-${key}`} value={form[key]} disabled={readOnly} onChange={(e) => setForm({ ...form, [key]: e.currentTarget.value })}>
          <option value="">None</option>
          {form[key] && !options.some(([v]) => v === form[key]) && <option value={form[key]}>{form[key]}</option>}
          {options.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      </div>
    );
  const numbers = settings.data?.callerIds ?? [];
  const flows = settings.data?.contactFlows ?? [];
  const queues = settings.data?.queues ?? [];

  return (
    <section>
      <h1>Settings</h1>
      <p class="muted">Rules every task of your organisation obeys.{!readOnly && ' Leave a field empty to clear it.'}</p>
      {readOnly && (
        <p id="settings-read-only" class="card">
          Only members of the group admins can change these settings.
        </p>
      )}
      <ErrorAlert error={settings.error} />
      {form && (
        <form class="stack" onSubmit={submit} aria-label="Settings" aria-describedby={readOnly ? 'settings-read-only' : undefined}>
          <fieldset class="form-grid">
            <legend>Numbers</legend>
            {field('defaultCountry', 'Default country', 'text', { maxLength: 2, size: 4, 'aria-describedby': 'country-hint' })}
            <small id="country-hint" class="wide">
              Two letters (ISO 3166), e.g. US: the country of numbers written without +.
            </small>
          </fieldset>
          <fieldset class="form-grid">
            <legend>Caller IDs and contact flows</legend>
            <p class="muted wide">
              The operator of the service assigns your organisation’s caller IDs and contact flows: ask them to add or
              remove one. A task calls with its own choice among them, else with these defaults. An agent-paced task
              sends its answered calls to the agents of one of your queues, which the operator assigns too.
            </p>
            <Assigned id="assigned-callers" label={`Caller IDs (${numbers.length})`} empty="No caller ID is assigned yet.">
              {numbers.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </Assigned>
            <Assigned id="assigned-flows" label={`Contact flows (${flows.length})`} empty="No contact flow is assigned yet.">
              {flows.map((f) => (
                <li key={f.id}>
                  {f.name} <small>{f.id}</small>
                </li>
              ))}
            </Assigned>
            <Assigned id="assigned-queues" label={`Agent queues (${queues.length})`} empty="No agent queue is assigned yet.">
              {queues.map((q) => (
                <li key={q.id}>
                  {q.name} <small>{q.id}</small>
                </li>
              ))}
            </Assigned>
            {choice('defaultCallerId', 'Default caller ID', numbers.map((n) => [n, n]))}
            {choice('defaultContactFlowId', 'Default contact flow', flows.map((f) => [f.id, f.name]))}
          </fieldset>
          <fieldset class="form-grid">
            <legend>Calling hours (the called party’s local time)</legend>
            {field('hoursStart', 'Calling hours start', 'time')}
            {field('hoursEnd', 'Calling hours end', 'time')}
          </fieldset>
          <fieldset class="form-grid">
            <legend>Frequency cap (per number, across all tasks)</legend>
            {field('maxCalls', 'Max calls', 'number', { min: 1, max: 100 })}
            {field('periodHours', 'Period (hours)', 'number', { min: 1, max: 720 })}
          </fieldset>
          <ErrorAlert error={error} />
          {message && <Status>{message}</Status>}
          {!readOnly && (
            <div class="buttons">
              <button type="submit" disabled={busy}>
                Save settings
              </button>
            </div>
          )}
          {settings.data?.updateTime && <p class="muted">Last changed {settings.data.updateTime}.</p>}
        </form>
      )}
    </section>
  );
}

/** A read-only list the operator keeps (D22), or a sentence saying it is empty. */
function Assigned(props: { id: string; label: string; empty: string; children: ComponentChildren[] }) {
  return (
    <div>
      <p id={props.id} class="list-label">
        {props.label}
      </p>
      {props.children.length ? <ul aria-labelledby={props.id}>{props.children}</ul> : <p class="muted">{props.empty}</p>}
    </div>
  );
}
