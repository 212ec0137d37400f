import { useEffect, useRef, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { OutcomeFilter, type CallbackView, type Diagnostics, type TaskHistory, type TaskResults, type TaskStat } from '../api/types';
import { AgentsPanel } from '../components/AgentsPanel';
import { Callbacks } from '../components/Callbacks';
import { ErrorAlert } from '../components/Alert';
import { DiagnosticsView, ReasonBars } from '../components/Diagnostics';
import { ExportButtons } from '../components/ExportButtons';
import { useLoader, usePageTitle, usePolling } from '../components/hooks';
import { StatusBadge } from '../components/StatusBadge';
import { TaskActions } from '../components/TaskActions';
import { TaskResultsView } from '../components/TaskResults';
import { TaskStats } from '../components/TaskStats';
import { duration, humanize, isFinalStatus, time } from '../format';
import { DIALING_MODE_LABELS, isPaced, queueLabel, targetPercent } from '../state/pacing';
import { outcomeKey } from '../state/history';
import { describeFilter, localInput } from '../state/schedule';
import { callerIdLabel, flowLabel, VOICEMAIL_LABELS } from '../state/telephony';

/** Callbacks the page lists, the latest set first page (D31). */
const CALLBACKS_SHOWN = 50;

export const FAST_POLL_MS = 3000;
export const SLOW_POLL_MS = 10000;

/** The export's outcome filters (D8) in words, offered in code order. */
const OUTCOME_FILTER_LABELS: Record<OutcomeFilter, string> = {
  [OutcomeFilter.ALL]: 'All',
  [OutcomeFilter.SUCCESS]: 'Successful',
  [OutcomeFilter.UNSUCCESSFUL]: 'Failed or no answer',
  [OutcomeFilter.NOT_DIALLED]: 'Not dialled',
};
const OUTCOME_FILTERS = Object.entries(OUTCOME_FILTER_LABELS);

export function TaskPage({ id }: { id: string }) {
  const detail = useLoader(() => API.getTask(id), [id]);
  const task = detail.data;
  usePageTitle(task ? task.taskName : 'Task');
  const [stat, setStat] = useState<TaskStat | null>(null);
  const [diag, setDiag] = useState<Diagnostics | null>(null);
  const [results, setResults] = useState<TaskResults | null>(null);
  const [callbacks, setCallbacks] = useState<CallbackView[] | null>(null);
  // The tenant's flows, queues and defaults, to name the task's.
  const settings = useLoader(() => API.getSettings(), []);
  const wantsResults = (task?.resultAttributes.length ?? 0) > 0;
  const paced = isPaced(task?.dialingMode);
  const [history, setHistory] = useState<TaskHistory | null>(null);
  // The outcomes and state (outcomeKey) the last statistics and the last history read showed.
  const statShown = useRef<string | null>(null);
  const historyShown = useRef<string | null>(null);
  const [pollError, setPollError] = useState<unknown>(null);
  const [filter, setFilter] = useState<OutcomeFilter>(OutcomeFilter.ALL);
  const status = stat?.status ?? task?.status;
  const final = status !== undefined && isFinalStatus(status);
  const knownStatus = useRef<number | undefined>(undefined);
  knownStatus.current = task?.status;

  /** One read of the statistics, the diagnostics, the callbacks, the results when the task
   *  records any, and the history when it moved (dropped when `signal` says it is stale). */
  async function tick(signal?: AbortSignal) {
    // The history (the whole campaign's chart) is read by the first poll, then only when the
    // statistics the last poll read show outcomes or a state it does not: it runs to some 2,200
    // intervals (a day of minutes, 30 days of hours, then days) and its states, the same at every
    // poll of a quiet, paused or finished task, and the figures say when it moved. It trails them by one poll at most; the chart's end ("now")
    // moves without it.
    const wantHistory = historyShown.current === null || historyShown.current !== statShown.current;
    const [s, d, r, c, h] = await Promise.allSettled([
      API.getTaskStat(id),
      API.getDiagnostics(id),
      wantsResults ? API.getTaskResults(id) : Promise.resolve(null),
      API.listCallbacks(id, { pageNum: 1, pageSize: CALLBACKS_SHOWN }),
      wantHistory ? API.getTaskHistory(id) : Promise.resolve(null),
    ]);
    if (signal?.aborted) return;
    if (c.status === 'fulfilled') setCallbacks(c.value.rows);
    if (s.status === 'fulfilled') {
      setStat(s.value);
      statShown.current = outcomeKey(s.value);
      if (knownStatus.current !== undefined && s.value.status !== knownStatus.current) void detail.reload();
    }
    if (d.status === 'fulfilled') setDiag(d.value);
    if (r.status === 'fulfilled' && r.value) setResults(r.value);
    if (h.status === 'fulfilled' && h.value) {
      setHistory(h.value);
      historyShown.current = outcomeKey(h.value);
    }
    setPollError([s, d, r, c, h].find((one) => one.status === 'rejected')?.reason ?? null);
  }

  useEffect(() => {
    setHistory(null);
    statShown.current = null;
    historyShown.current = null;
    setStat(null);
    setDiag(null);
    setResults(null);
    setCallbacks(null);
  }, [id]);

  // Every 3 s while the tab is visible; every 10 s once the task is final (a recall still shows).
  // Once the task shows it records results, they are read too (from a tick at once).
  usePolling(tick, { every: final ? SLOW_POLL_MS : FAST_POLL_MS }, [id, wantsResults]);

  const refresh = () => {
    historyShown.current = null; // an action may have changed its state
    void detail.reload();
    void tick();
  };

  return (
    <>
      <section>
        <p>
          <a href="#/tasks">← Tasks</a>
        </p>
        <h1>{task ? task.taskName : 'Task'}</h1>
        <ErrorAlert error={detail.error} />
        {task && (
          <>
            <dl class="details">
              <dt>Status</dt>
              <dd>
                <StatusBadge status={task.status} />
              </dd>
              <dt>Description</dt>
              <dd>{task.taskDesc || '—'}</dd>
              <dt>Data source</dt>
              <dd>
                <a href={`#/datasource/${encodeURIComponent(task.dataSourceId)}`}>Open the data source</a> ({task.contactCount} contacts)
              </dd>
              <dt>Priority</dt>
              <dd>{task.priority}</dd>
              <dt>Max dial count</dt>
              <dd>{task.maxDialCount}</dd>
              <dt>Call interval</dt>
              <dd>{duration(task.callInterval)}</dd>
              <dt>Daily window</dt>
              <dd>
                {task.dailyStartTime && task.dailyEndTime ? `${task.dailyStartTime}–${task.dailyEndTime}` : 'All day'} (
                {task.windowTimeZone === 'TASK' ? `task time zone${task.timeZone ? ` ${task.timeZone}` : ''}` : 'called party’s local time'})
              </dd>
              <dt>Schedule</dt>
              <dd>
                {task.startAt || task.endAt
                  ? `${task.startAt ? `from ${localInput(task.startAt).replace('T', ' ')}` : 'from publish'}${task.endAt ? `, stopped at ${localInput(task.endAt).replace('T', ' ')}` : ''}`
                  : 'None'}
              </dd>
              <dt>Contacts dialled</dt>
              <dd>{describeFilter(task.filter)}</dd>
              <dt>Retry rules</dt>
              <dd>
                {task.retryRules.length === 0
                  ? 'None'
                  : task.retryRules
                      .map((r) => `${humanize(r.reason)}: ${r.delaySeconds != null ? `wait ${duration(r.delaySeconds)}` : 'usual wait'}${r.maxAttempts != null ? `, at most ${r.maxAttempts} attempts` : ''}`)
                      .join('; ')}
              </dd>
              <dt>Caller ID</dt>
              <dd>{callerIdLabel(task.callerId, settings.data)}</dd>
              <dt>Contact flow</dt>
              <dd>{flowLabel(task.contactFlowId, settings.data)}</dd>
              <dt>Call attributes</dt>
              <dd>{task.callAttributes.length ? task.callAttributes.join(', ') : 'None'}</dd>
              <dt>Result attributes</dt>
              <dd>{task.resultAttributes.length ? task.resultAttributes.join(', ') : 'None'}</dd>
              <dt>On voicemail</dt>
              <dd>{VOICEMAIL_LABELS[task.voicemail]}</dd>
              <dt>Dialing mode</dt>
              <dd>{DIALING_MODE_LABELS[task.dialingMode]}</dd>
              {paced && (
                <>
                  <dt>Queue</dt>
                  <dd>{queueLabel(task.queueId, settings.data)}</dd>
                </>
              )}
              {task.dialingMode === 'PROGRESSIVE' && (
                <>
                  <dt>Calls per agent</dt>
                  <dd>{task.callsPerAgent}</dd>
                </>
              )}
              {task.dialingMode === 'PREDICTIVE' && (
                <>
                  <dt>Abandonment target</dt>
                  <dd>{targetPercent(task.abandonmentTarget)}</dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{time(task.createTime)}</dd>
              <dt>Started</dt>
              <dd>{time(task.startTime)}</dd>
              <dt>Ended</dt>
              <dd>{time(task.endTime)}</dd>
              {task.stopReason && (
                <>
                  <dt>Stop reason</dt>
                  <dd>{task.stopReason}</dd>
                </>
              )}
              {task.failReason && (
                <>
                  <dt>Failure reason</dt>
                  <dd>{task.failReason}</dd>
                </>
              )}
            </dl>
          </>
        )}
      </section>
      {task && (
        <>
          <TaskActions task={task} onChanged={refresh} />
          <ErrorAlert error={pollError} />
          <TaskStats stat={stat} history={history} task={task} paced={paced} />
          {paced && <AgentsPanel task={task} stat={stat} diag={diag} settings={settings.data} />}
          <ReasonBars reasons={diag?.reasons ?? null} />
          <Callbacks task={task} callbacks={callbacks} onChanged={refresh} />
          {wantsResults && <TaskResultsView results={results} />}
          <DiagnosticsView diag={diag} />
          <section aria-labelledby="task-export-heading">
            <h2 id="task-export-heading">Export outcomes</h2>
            <ExportButtons
              download={(format, redirect) => API.exportTask(id, { status: filter === OutcomeFilter.ALL ? undefined : filter, format }, redirect)}
              baseName={`task_contacts_${id}`}
              startJob={(format) => API.startTaskExportJob(id, format, filter)}
            >
              <div class="field narrow">
                <label for="outcome-filter">Outcome filter</label>
                <select id="outcome-filter" value={String(filter)} onChange={(e) => setFilter(Number(e.currentTarget.value))}>
                  {OUTCOME_FILTERS.map(([v, label]) => (
                    <option key={v} value={v}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
            </ExportButtons>
          </section>
        </>
      )}
    </>
  );
}
