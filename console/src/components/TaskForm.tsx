import { useMemo, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { windowZoneValues, type AddTask, type TaskView, type WindowZone } from '../api/types';
import { pacingBody, pacingFrom, pacingProblem } from '../state/pacing';
import { attributeChoices, telephonyBody, telephonyFrom, telephonyProblem } from '../state/telephony';
import { DataSourcePicker, FixedDataSource } from './DataSourcePicker';
import { useLoader } from './hooks';
import { PacingFields } from './PacingFields';
import { LOOKUP_PAGE_SIZE } from './Pager';
import { RetryRulesEditor, rowsFromRules, rulesFromRows, type RuleRow } from './RetryRules';
import { FormFooter } from './FormFooter';
import { FilterEditor } from './FilterEditor';
import { filterFromRows, localInput, rfc3339, rowsFromFilter, type FilterRow } from '../state/schedule';
import { TelephonyFields } from './TelephonyFields';

/** Where a task's daily window is read (D15), in words. */
const WINDOW_ZONE_LABELS: Record<WindowZone, string> = {
  CALLED_PARTY: 'Called party’s local time',
  TASK: 'The task’s time zone',
};

/** The task form: "New task" (create) and a DRAFT task's "Edit" (update). */
export function TaskForm(props: {
  label: string;
  initial?: TaskView;
  submitLabel: string;
  busy: boolean;
  onSubmit: (body: AddTask) => void;
  onCancel: () => void;
}) {
  const t = props.initial;
  const [name, setName] = useState(t?.taskName ?? '');
  const [desc, setDesc] = useState(t?.taskDesc ?? '');
  const [dataSourceId, setDataSourceId] = useState(t?.dataSourceId ?? '');
  const [priority, setPriority] = useState(String(t?.priority ?? 3));
  const [maxDial, setMaxDial] = useState(String(t?.maxDialCount ?? 3));
  const [interval, setCallInterval] = useState(String(t?.callInterval ?? 60));
  const [start, setStart] = useState(t?.dailyStartTime ?? '');
  const [end, setEnd] = useState(t?.dailyEndTime ?? '');
  const [zone, setZone] = useState<WindowZone | ''>(t ? t.windowTimeZone : '');
  const [timeZone, setTimeZone] = useState(t?.timeZone ?? '');
  const [rules, setRules] = useState<RuleRow[]>(rowsFromRules(t?.retryRules));
  const [telephony, setTelephony] = useState(telephonyFrom(t));
  const [pacing, setPacing] = useState(pacingFrom(t));
  const [startAt, setStartAt] = useState(localInput(t?.startAt));
  const [endAt, setEndAt] = useState(localInput(t?.endAt));
  const [filterRows, setFilterRows] = useState<FilterRow[]>(rowsFromFilter(t?.filter));
  const settings = useLoader(() => API.getSettings(), []);
  const [problem, setProblem] = useState<string | null>(null);
  const p = t ? `task-edit` : 'task-new';
  // A new task's is the one its picker shows (the first match until one is chosen); a draft's is fixed.
  const selected = t ? t.dataSourceId : dataSourceId;
  // The custom fields a call may send are those on the data source's first page of contacts.
  const contacts = useLoader(
    () => (selected ? API.listContacts(selected, { pageNum: 1, pageSize: LOOKUP_PAGE_SIZE }) : Promise.resolve(null)),
    [selected],
  );
  const fields = useMemo(() => attributeChoices(contacts.data?.rows ?? [], telephony.callAttributes), [contacts.data, telephony.callAttributes]);

  function submit(e: Event) {
    e.preventDefault();
    if (!name.trim()) return setProblem('Name is required.');
    if (!t && !selected) return setProblem('Choose a data source (create one first).');
    if ((start && !end) || (!start && end)) return setProblem('Give both a daily start time and a daily end time, or neither.');
    const refused = telephonyProblem(telephony);
    if (refused) return setProblem(refused);
    const unpaced = pacingProblem(pacing);
    if (unpaced) return setProblem(unpaced);
    const filter = filterFromRows(filterRows);
    if ('problem' in filter) return setProblem(filter.problem);
    const [from, until] = [rfc3339(startAt), rfc3339(endAt)];
    if (from && until && new Date(until) <= new Date(from)) return setProblem('The schedule’s end must come after its start.');
    setProblem(null);
    const body: AddTask = {
      taskName: name.trim(),
      taskDesc: desc.trim(),
      dataSourceId: selected,
      priority: Number(priority),
      maxDialCount: Number(maxDial),
      callInterval: Number(interval),
      retryRules: rulesFromRows(rules),
      ...telephonyBody(telephony, !!t),
      ...pacingBody(pacing, !!t),
    };
    if (start || t) body.dailyStartTime = start.slice(0, 5);
    if (end || t) body.dailyEndTime = end.slice(0, 5);
    if (zone) body.windowTimeZone = zone;
    if (timeZone.trim() || t) body.timeZone = timeZone.trim();
    // "" clears a time on update (D31).
    if (from || t) body.startAt = from ?? '';
    if (until || t) body.endAt = until ?? '';
    if (filter.conditions.length || t) body.filter = filter.conditions;
    props.onSubmit(body);
  }

  const num = (id: string, label: string, value: string, set: (v: string) => void, min: number, max: number) => (
    <div class="field">
      <label for={`${p}-${id}`}>{label}</label>
      <input id={`${p}-${id}`} type="number" min={min} max={max} step={1} required value={value} onInput={(e) => set(e.currentTarget.value)} />
    </div>
  );

  return (
    <form class="card form-grid" aria-label={props.label} onSubmit={submit}>
      <div class="field">
        <label for={`${p}-name`}>Name</label>
        <input id={`${p}-name`} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${p}-desc`}>Description</label>
        <input id={`${p}-desc`} maxLength={500} value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
      </div>
      {t ? (
        <FixedDataSource id={`${p}-ds`} dataSourceId={t.dataSourceId} />
      ) : (
        <DataSourcePicker id={`${p}-ds`} value={dataSourceId} onChange={setDataSourceId} />
      )}
      {num('priority', 'Priority', priority, setPriority, 1, 5)}
      {num('maxdial', 'Max dial count', maxDial, setMaxDial, 1, 10)}
      {num('interval', 'Call interval (seconds)', interval, setCallInterval, 10, 86400)}
      <div class="field">
        <label for={`${p}-start`}>Daily start time</label>
        <input id={`${p}-start`} type="time" value={start} onInput={(e) => setStart(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${p}-end`}>Daily end time</label>
        <input id={`${p}-end`} type="time" value={end} onInput={(e) => setEnd(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${p}-wzone`}>Window time zone</label>
        <select id={`${p}-wzone`} value={zone} onChange={(e) => setZone(e.currentTarget.value as WindowZone | '')}>
          {!t && <option value="">Default (called party)</option>}
          {windowZoneValues.map((z) => (
            <option key={z} value={z}>
              {WINDOW_ZONE_LABELS[z]}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${p}-tz`}>Task time zone</label>
        <input id={`${p}-tz`} placeholder="e.g. Asia/Shanghai" value={timeZone} onInput={(e) => setTimeZone(e.currentTarget.value)} />
        <small>Optional IANA name; default the service’s zone.</small>
      </div>
      <div class="field">
        <label for={`${p}-start-at`}>Start calling at</label>
        <input id={`${p}-start-at`} type="datetime-local" value={startAt} onInput={(e) => setStartAt(e.currentTarget.value)} />
        <small>Optional, in your time zone; no call before it.</small>
      </div>
      <div class="field">
        <label for={`${p}-end-at`}>Stop the task at</label>
        <input id={`${p}-end-at`} type="datetime-local" value={endAt} onInput={(e) => setEndAt(e.currentTarget.value)} />
        <small>Optional; the task is stopped then, its calls in flight recorded.</small>
      </div>
      <RetryRulesEditor rows={rules} onChange={setRules} />
      <FilterEditor prefix={p} rows={filterRows} fields={fields} onChange={setFilterRows} />
      <TelephonyFields prefix={p} value={telephony} onChange={setTelephony} settings={settings.data} settingsError={settings.error} fields={fields} />
      <PacingFields prefix={p} value={pacing} onChange={setPacing} settings={settings.data} />
      <FormFooter problem={problem} busy={props.busy} submitLabel={props.submitLabel} onCancel={props.onCancel} />
    </form>
  );
}
