// A task's dialing mode (D30): agentless (the flow alone takes the call), or paced to the agents
// of one of the tenant's queues, progressive (so many calls ringing per free agent) or predictive
// (dialling ahead of agents, abandoned calls held under a target). The form's values, the checks
// the API makes, what is sent, and the figures of the task page's agents panel.
import type { AddTask, DialingMode, Settings, TaskView } from '../api/types';
import { humanize } from '../format';

export const DIALING_MODE_LABELS: Record<DialingMode, string> = {
  AGENTLESS: 'Agentless (the flow takes the call)',
  PROGRESSIVE: 'Progressive (paced to free agents)',
  PREDICTIVE: 'Predictive (dials ahead of agents)',
};

/** `callsPerAgent`'s bounds and default, as the API's (two decimals kept). */
export const CALLS_PER_AGENT = { min: 1, max: 3, default: 1 } as const;
/** `abandonmentTarget`'s, a percentage of the calls a person answered. */
export const ABANDONMENT_TARGET = { min: 0, max: 10, default: 3 } as const;

export interface Pacing {
  mode: DialingMode;
  /** One of the tenant's queues, or '' for none. */
  queueId: string;
  /** As typed (checked on submit). */
  callsPerAgent: string;
  /** As typed, a percentage (checked on submit). */
  abandonmentTarget: string;
}

/** Whether a mode paces calls to a queue's agents (and so needs a queue). */
export function isPaced(mode: DialingMode | null | undefined): boolean {
  return !!mode && mode !== 'AGENTLESS';
}

export function pacingFrom(task?: TaskView): Pacing {
  return {
    mode: task?.dialingMode ?? 'AGENTLESS',
    queueId: task?.queueId ?? '',
    callsPerAgent: String(task?.callsPerAgent ?? CALLS_PER_AGENT.default),
    abandonmentTarget: String(task?.abandonmentTarget ?? ABANDONMENT_TARGET.default),
  };
}

/** Whether `raw` is a number within `min..=max` once rounded to two decimals, as the API reads it. */
function inRange(raw: string, min: number, max: number): boolean {
  if (!raw.trim()) return false;
  const hundredths = Math.round(Number(raw) * 100);
  return Number.isFinite(hundredths) && hundredths >= min * 100 && hundredths <= max * 100;
}

/** What the API would refuse in `p`, naming the form's field, or null. Only the mode's own
 *  fields are checked: the others are neither shown nor sent. */
export function pacingProblem(p: Pacing): string | null {
  if (!isPaced(p.mode)) return null;
  if (!p.queueId) return `Queue is required when the dialing mode is ${humanize(p.mode)}.`;
  if (p.mode === 'PROGRESSIVE' && !inRange(p.callsPerAgent, CALLS_PER_AGENT.min, CALLS_PER_AGENT.max)) {
    return `Calls per agent must be a number from ${CALLS_PER_AGENT.min} to ${CALLS_PER_AGENT.max}.`;
  }
  if (p.mode === 'PREDICTIVE' && !inRange(p.abandonmentTarget, ABANDONMENT_TARGET.min, ABANDONMENT_TARGET.max)) {
    return `Abandonment target (%) must be a number from ${ABANDONMENT_TARGET.min} to ${ABANDONMENT_TARGET.max}.`;
  }
  return null;
}

type PacingBody = Pick<AddTask, 'dialingMode' | 'queueId' | 'callsPerAgent' | 'abandonmentTarget'>;

/**
 * The fields to send: a new agentless task sends none (the default); an edit always sends the
 * mode and the queue (`''` clearing it when agentless). A paced mode sends its queue and its own
 * number (calls per agent, or the abandonment target); the other number is left as the task has it.
 */
export function pacingBody(p: Pacing, editing: boolean): PacingBody {
  if (!isPaced(p.mode)) return editing ? { dialingMode: p.mode, queueId: '' } : {};
  const body: PacingBody = { dialingMode: p.mode, queueId: p.queueId };
  if (p.mode === 'PROGRESSIVE') body.callsPerAgent = Number(p.callsPerAgent);
  if (p.mode === 'PREDICTIVE') body.abandonmentTarget = Number(p.abandonmentTarget);
  return body;
}

/** A queue as shown: its name and id where the tenant's queues name it, else its id. */
export function queueLabel(queueId: string | null | undefined, settings?: Settings | null): string {
  if (!queueId) return 'None';
  const name = settings?.queues.find((q) => q.id === queueId)?.name;
  return name ? `${name} (${queueId})` : queueId;
}

/** A percentage as typed in the form and kept by the API (`3`, `2.5`), with its sign. */
export function targetPercent(target: number): string {
  return `${Number(target.toFixed(2))}%`;
}

/**
 * Whether the abandonment rate (a fraction, 4 decimals) is at or above the target (a percentage,
 * 2 decimals): compared in hundredths of a percent, so 0.03 meets a target of 3. A task with no
 * abandoned call is never over, even with a target of 0.
 */
export function atOrOverTarget(rate: number, target: number): boolean {
  const rateBasis = Math.round(rate * 10_000);
  return rateBasis > 0 && rateBasis >= Math.round(target * 100);
}
