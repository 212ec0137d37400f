import { TaskStatus, type TaskHistory, type TaskView } from '../api/types';
import { count } from '../format';
import {
  campaignRange,
  countsOf,
  dateTimeLabel,
  historyGeometry,
  instant,
  pauseSpans,
  runningTotals,
  SERIES_KEYS,
  SERIES_LABELS,
  spanLabel,
  windowShown,
  windowSpans,
  type SeriesKey,
  type Zone,
} from '../state/history';

const W = 640;
const H = 260;
const BOX = { width: W, height: H, left: 52, right: 16, top: 22, bottom: 44 };

export const SERIES_STYLE: Record<SeriesKey, { color: string; dash?: string }> = {
  calls: { color: '#1d4ed8' },
  successes: { color: '#15803d', dash: '8 4' },
  failures: { color: '#b91c1c', dash: '2 3' },
  noAnswers: { color: '#8a5a00', dash: '10 3 2 3' },
};
const WINDOW_FILL = '#e6f4ea';
const PAUSE_FILL = '#d1d5db';
const SCHEDULE_COLOR = '#6b21a8';

/** The zone this browser reads times in (the axis's). */
const BROWSER_ZONE: string = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/**
 * The whole campaign from the task's history: calls, successes, failures and no answers as
 * running totals from its start to its end (or now). Running totals rather than outcomes per
 * minute: the history's intervals are a minute, an hour or a day long as they age, and a rate
 * would jump where the grain changes, while a total is exact at the end of every interval,
 * reads "how far along" at a glance, and ends at the statistics above it; a pause shows as a
 * flat stretch under its shading. Its pauses, schedule and daily window (when it is read in the
 * task's zone) are marked; times read in the browser's zone (`zone`).
 */
export function StatsChart({ history, task, now = Date.now(), zone = BROWSER_ZONE }: { history: TaskHistory | null; task: TaskView; now?: number; zone?: Zone }) {
  const started = !!history && (history.startTime || history.intervals.length > 0);
  const range = history ? campaignRange(history, now) : { from: now, to: now + 60_000 };
  const points = history ? runningTotals(history.intervals, range) : [];
  const pauses = history ? pauseSpans(history.states, range.to) : [];
  const daily = windowShown(task, history);
  const windows = started && daily.kind === 'zone' ? windowSpans(range, daily.start, daily.end, daily.zone) : [];
  const startAt = instant(task.startAt);
  const endAt = instant(task.endAt);
  const g = historyGeometry(points, range, { windows, pauses, startAt, endAt }, BOX, zone);
  const bottom = H - BOX.bottom;
  const plotH = bottom - BOX.top;
  const at = (t: number) => dateTimeLabel(t, zone);
  const totals = points[points.length - 1];
  const zoneName = typeof zone === 'string' ? zone : 'UTC offset';

  const notes: string[] = [];
  if (pauses.length)
    notes.push(
      pauses.length <= 5
        ? `Paused (grey): ${pauses.map((p) => spanLabel(p.from, p.to >= range.to && history?.status === TaskStatus.PAUSED ? null : p.to, zone)).join(', ')}.`
        : `Paused (grey) ${pauses.length} times.`,
    );
  if (daily.kind === 'zone') notes.push(`Green bands: its daily window, ${daily.start}–${daily.end} in ${daily.zoneName}.`);
  if (daily.kind === 'perContact')
    notes.push(`Its daily window, ${daily.start}–${daily.end}, is read in each contact’s own time, so it is not shaded.`);
  if (daily.kind === 'unknownZone') notes.push(`Its daily window, ${daily.start}–${daily.end}, is read in a time zone this browser cannot show, so it is not shaded.`);
  if (startAt !== null) notes.push(`Scheduled start: ${at(startAt)}${g.schedule.some((m) => m.key === 'startAt') ? ' (purple line)' : ''}.`);
  if (endAt !== null) notes.push(`Scheduled stop: ${at(endAt)}${g.schedule.some((m) => m.key === 'endAt') ? ' (purple line)' : ''}.`);

  const desc = !history
    ? 'Loading the history.'
    : !started
      ? 'It has not started yet.'
      : `Running totals from ${at(range.from)} to ${history.endTime ? at(range.to) : 'now'}: ${count(totals?.calls ?? 0)} calls in ${history.intervals.length} intervals; the table below gives them.`;

  return (
    <figure class="chart-figure">
      <svg class="chart" data-testid="stats-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">Outcomes over the whole campaign</title>
        <desc id="chart-desc">{desc}</desc>
        {g.windows.map((b) => (
          <rect key={`w${b.x}`} data-testid="chart-window" x={b.x} y={BOX.top} width={b.width} height={plotH} fill={WINDOW_FILL} />
        ))}
        {g.pauses.map((p) => (
          <g key={`p${p.x}`} data-testid="chart-pause">
            <rect x={p.x} y={BOX.top} width={Math.max(p.width, 1)} height={plotH} fill={PAUSE_FILL} fill-opacity={0.7}>
              <title>{`Paused ${spanLabel(p.from, p.to, zone)}`}</title>
            </rect>
            {p.width >= 40 && (
              <text x={p.x + p.width / 2} y={BOX.top + 12} text-anchor="middle">
                Paused
              </text>
            )}
          </g>
        ))}
        {g.yTicks.map((t) => (
          <g key={t.value}>
            <line x1={BOX.left} x2={W - BOX.right} y1={t.y} y2={t.y} stroke="#e3e6ea" />
            <text x={BOX.left - 6} y={t.y + 4} text-anchor="end">
              {t.value}
            </text>
          </g>
        ))}
        <line x1={BOX.left} x2={BOX.left} y1={BOX.top} y2={bottom} stroke="#4a5360" />
        <line x1={BOX.left} x2={W - BOX.right} y1={bottom} y2={bottom} stroke="#4a5360" />
        {started &&
          g.xTicks.map((t) => (
            <g key={t.label + t.x}>
              <line x1={t.x} x2={t.x} y1={bottom} y2={bottom + 4} stroke="#4a5360" />
              <text x={t.x} y={bottom + 16} text-anchor="middle">
                {t.label}
              </text>
            </g>
          ))}
        <text x={(BOX.left + W - BOX.right) / 2} y={H - 6} text-anchor="middle">
          Time ({zoneName})
        </text>
        <text x={14} y={(BOX.top + bottom) / 2} text-anchor="middle" transform={`rotate(-90 14 ${(BOX.top + bottom) / 2})`}>
          Running total
        </text>
        {g.schedule.map((m) => (
          <g key={m.key} data-testid="chart-schedule">
            <line x1={m.x} x2={m.x} y1={BOX.top - 8} y2={bottom} stroke={SCHEDULE_COLOR} stroke-width={1.5} stroke-dasharray="4 3" />
            <text x={m.key === 'startAt' ? m.x + 4 : m.x - 4} y={BOX.top - 10} text-anchor={m.key === 'startAt' ? 'start' : 'end'}>
              {m.key === 'startAt' ? 'Scheduled start' : 'Scheduled stop'}
            </text>
          </g>
        ))}
        {started &&
          g.lines.map((l) => (
            <polyline key={l.key} points={l.points} fill="none" stroke={SERIES_STYLE[l.key].color} stroke-width={2} stroke-dasharray={SERIES_STYLE[l.key].dash} />
          ))}
      </svg>
      <ul class="legend" aria-hidden="true">
        {SERIES_KEYS.map((k) => (
          <li key={k}>
            <span style={{ background: SERIES_STYLE[k].color }} />
            {SERIES_LABELS[k]}
          </li>
        ))}
        {pauses.length > 0 && (
          <li>
            <span class="swatch" style={{ background: PAUSE_FILL }} />
            Paused
          </li>
        )}
        {windows.length > 0 && (
          <li>
            <span class="swatch" style={{ background: WINDOW_FILL }} />
            Daily window
          </li>
        )}
        {g.schedule.length > 0 && (
          <li>
            <span style={{ background: SCHEDULE_COLOR }} />
            Schedule
          </li>
        )}
      </ul>
      {notes.length > 0 && <figcaption class="muted">{notes.join(' ')}</figcaption>}
      <div class="visually-hidden">
        <table>
          <caption>Outcomes by interval over the whole campaign (times in {zoneName})</caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">To</th>
              {SERIES_KEYS.map((k) => (
                <th scope="col" key={k}>
                  {SERIES_LABELS[k]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(history?.intervals ?? []).map((interval) => {
              const counts = countsOf(interval);
              const from = instant(interval.from);
              const to = instant(interval.to);
              return (
                <tr key={interval.from}>
                  <th scope="row">{from === null ? interval.from : at(from)}</th>
                  <td>{to === null ? interval.to : at(to)}</td>
                  {SERIES_KEYS.map((k) => (
                    <td key={k}>{counts[k]}</td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
