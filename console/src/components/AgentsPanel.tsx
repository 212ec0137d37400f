import type { Diagnostics, Settings, TaskStat, TaskView } from '../api/types';
import { count, percent } from '../format';
import { atOrOverTarget, DIALING_MODE_LABELS, queueLabel, targetPercent } from '../state/pacing';

const NOT_READ = 'not read yet';

/**
 * The "Agents" section of an agent-paced task (D30): its queue, the queue's agents as the tick
 * last read them (from the diagnostics), the calls in flight, and the abandonment rate against
 * the task's target, flagged once it reaches it. Everything comes from the page's one poll: the
 * statistics' rate, else the detail's.
 */
export function AgentsPanel(props: { task: TaskView; stat: TaskStat | null; diag: Diagnostics | null; settings: Settings | null }) {
  const { task, stat, diag } = props;
  const agents = diag?.agents ?? null;
  const rate = stat?.abandonRate ?? task.abandonRate;
  const abandoned = stat?.abandonCount ?? task.abandonCount;
  const target = targetPercent(task.abandonmentTarget);
  const over = atOrOverTarget(rate, task.abandonmentTarget);
  const figures: { label: string; value: string; note?: string; flag?: boolean }[] = [
    { label: 'Queue', value: queueLabel(task.queueId, props.settings) },
    { label: 'Agents available', value: agents ? count(agents.available) : NOT_READ },
    {
      label: 'Agents busy',
      value: agents ? count(agents.busy) : NOT_READ,
      note: agents && agents.soonFree > 0 ? `${count(agents.soonFree)} about to be free` : undefined,
    },
    { label: 'Calls in flight', value: diag ? count(diag.inFlight) : '—' },
    {
      label: 'Abandonment rate',
      value: percent(rate),
      note: over ? `At or above the target of ${target} (${count(abandoned)} abandoned)` : `Target ${target} (${count(abandoned)} abandoned)`,
      flag: over,
    },
  ];
  return (
    <section aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents</h2>
      <p>
        {DIALING_MODE_LABELS[task.dialingMode]}
        {task.dialingMode === 'PROGRESSIVE' && `, ${task.callsPerAgent} calls per agent`}.
      </p>
      <dl class="figures" data-testid="agents">
        {figures.map((f, i) => (
          <div key={f.label} class={f.flag ? 'flag' : undefined}>
            <dt id={`agents-fig-${i}`}>{f.label}</dt>
            <dd aria-labelledby={`agents-fig-${i}`}>{f.value}</dd>
            {f.note && <dd class="note">{f.note}</dd>}
          </div>
        ))}
      </dl>
      <p class="muted">
        {agents ? `Agents read at ${agents.readTime}.` : 'The queue’s agents are not read yet: the service reads them while the task runs.'}
      </p>
    </section>
  );
}
