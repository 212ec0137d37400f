import type { TaskHistory, TaskStat, TaskView } from '../api/types';
import { count, duration, percent, statusName } from '../format';
import { StatsChart } from './StatsChart';

/** The "Statistics" section: status, labelled figures and the chart of the whole campaign
 *  (`history`); `paced`, a task whose answered calls go to agents (D30), also counts the calls
 *  no agent took. */
export function TaskStats({
  stat,
  history,
  task,
  paced = false,
}: {
  stat: TaskStat | null;
  history: TaskHistory | null;
  task: TaskView;
  paced?: boolean;
}) {
  const figures: [string, string][] = stat
    ? [
        ['Contacts', count(stat.totalContacts)],
        ['Calls', count(stat.callCount)],
        ['Successes', count(stat.successCount)],
        ['Failures', count(stat.failCount)],
        ['No answer', count(stat.noAnswerCount)],
        ...(paced ? [['Abandoned', count(stat.abandonCount)] as [string, string]] : []),
        ['Callbacks', count(stat.callbackCount)],
        ['Filtered out', count(stat.filteredCount)],
        ['Dial rate', percent(stat.dialRate)],
        ['Success rate', percent(stat.successRate)],
        ['Total duration', duration(stat.totalDuration)],
        ['Average duration', duration(stat.avgDuration)],
      ]
    : [];
  return (
    <section aria-labelledby="stats-heading">
      <h2 id="stats-heading">Statistics</h2>
      {stat ? (
        <>
          <p>
            Status: <strong data-testid="task-status">{statusName(stat.status)}</strong>
            <span class="muted"> · updated {stat.lastUpdateTime}</span>
          </p>
          <dl class="figures">
            {figures.map(([label, value], i) => (
              <div key={label}>
                <dt id={`fig-${i}`}>{label}</dt>
                <dd aria-labelledby={`fig-${i}`}>{value}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : (
        <p class="muted">Loading statistics…</p>
      )}
      <StatsChart history={history} task={task} />
    </section>
  );
}
