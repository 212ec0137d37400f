import { voicemailValues, type Settings, type Voicemail } from '../api/types';
import {
  callerIdLabel,
  flowLabel,
  LOCAL_PRESENCE,
  MAX_CALL_ATTRIBUTES,
  MAX_RESULT_ATTRIBUTES,
  VOICEMAIL_LABELS,
  type Telephony,
} from '../state/telephony';
import { ErrorAlert } from './Alert';

/**
 * A task's telephony in the task form (D22): the caller ID and flow among the tenant's (from its
 * settings), what voicemail does, the fields each call sends its flow and the results it records.
 */
export function TelephonyFields(props: {
  prefix: string;
  value: Telephony;
  onChange: (value: Telephony) => void;
  settings: Settings | null;
  settingsError: unknown;
  /** The fields the data source offers (attributeChoices). */
  fields: string[];
}) {
  const { prefix: p, value, settings } = props;
  const set = (patch: Partial<Telephony>) => props.onChange({ ...value, ...patch });
  const numbers = settings?.callerIds ?? [];
  const flows = settings?.contactFlows ?? [];
  const unknownNumber = value.callerId && value.callerId !== LOCAL_PRESENCE && !numbers.includes(value.callerId);
  const unknownFlow = value.contactFlowId && !flows.some((f) => f.id === value.contactFlowId);
  return (
    <>
      <fieldset class="wide">
        <legend>Telephony</legend>
        <ErrorAlert error={props.settingsError} />
        <div class="form-grid">
          <div class="field">
            <label for={`${p}-caller`}>Caller ID</label>
            <select id={`${p}-caller`} value={value.callerId} onChange={(e) => set({ callerId: e.currentTarget.value })}>
              <option value="">{callerIdLabel('', settings)}</option>
              <option value={LOCAL_PRESENCE}>{callerIdLabel(LOCAL_PRESENCE)}</option>
              {unknownNumber && <option value={value.callerId}>{value.callerId}</option>}
              {numbers.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
            <small>Local presence calls from your number in the called party’s area or country.</small>
          </div>
          <div class="field">
            <label for={`${p}-flow`}>Contact flow</label>
            <select id={`${p}-flow`} value={value.contactFlowId} onChange={(e) => set({ contactFlowId: e.currentTarget.value })}>
              <option value="">{flowLabel('', settings)}</option>
              {unknownFlow && <option value={value.contactFlowId}>{value.contactFlowId}</option>}
              {flows.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={`${p}-voicemail`}>On voicemail</label>
            <select id={`${p}-voicemail`} value={value.voicemail} onChange={(e) => set({ voicemail: e.currentTarget.value as Voicemail })}>
              {voicemailValues.map((v) => (
                <option key={v} value={v}>
                  {VOICEMAIL_LABELS[v]}
                </option>
              ))}
            </select>
          </div>
        </div>
        {settings && numbers.length === 0 && (
          <small>No caller ID is assigned to your organisation yet: the operator assigns them.</small>
        )}
      </fieldset>
      <AttributePicker fields={props.fields} chosen={value.callAttributes} onChange={(callAttributes) => set({ callAttributes })} />
      <ResultNamesEditor names={value.resultAttributes} onChange={(resultAttributes) => set({ resultAttributes })} />
    </>
  );
}

/** The contact fields each call sends its flow: a checkbox per field, at most MAX_CALL_ATTRIBUTES. */
function AttributePicker(props: { fields: string[]; chosen: string[]; onChange: (chosen: string[]) => void }) {
  const { fields, chosen } = props;
  const full = chosen.length >= MAX_CALL_ATTRIBUTES;
  function toggle(name: string) {
    const next = new Set(chosen);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    props.onChange(fields.filter((f) => next.has(f)));
  }
  return (
    <fieldset class="wide">
      <legend>Call attributes (optional)</legend>
      <p class="muted">
        The contact fields each call sends its flow: {chosen.length} of at most {MAX_CALL_ATTRIBUTES} chosen.
      </p>
      <ul class="checks">
        {fields.map((name) => (
          <li key={name}>
            <label class="inline">
              <input type="checkbox" checked={chosen.includes(name)} disabled={full && !chosen.includes(name)} onChange={() => toggle(name)} />
              {name}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

/** The names the flow may set, typed one per row: at most MAX_RESULT_ATTRIBUTES. */
function ResultNamesEditor(props: { names: string[]; onChange: (names: string[]) => void }) {
  const { names, onChange } = props;
  return (
    <fieldset class="wide">
      <legend>Result attributes (optional)</legend>
      <p class="muted">
        Names the flow may set on an answered call (letters, digits and _, at most 32), recorded with the call; the task
        page counts their values. At most {MAX_RESULT_ATTRIBUTES}.
      </p>
      {names.map((name, i) => (
        <div class="buttons rule" key={i}>
          <label class="inline">
            Result name {i + 1}{' '}
            <input value={name} maxLength={64} size={24} onInput={(e) => onChange(names.map((n, j) => (j === i ? e.currentTarget.value : n)))} />
          </label>
          <button type="button" class="secondary small" onClick={() => onChange(names.filter((_, j) => j !== i))}>
            Remove result name {i + 1}
          </button>
        </div>
      ))}
      {names.length < MAX_RESULT_ATTRIBUTES && (
        <button type="button" class="secondary small" onClick={() => onChange([...names, ''])}>
          Add result name
        </button>
      )}
    </fieldset>
  );
}
