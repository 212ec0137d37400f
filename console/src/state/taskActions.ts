// Which task operations each state allows (D10), and how to explain a refusal (405).
import { TaskStatus } from '../api/types';
import { statusName } from '../format';

export type TaskAction = 'publish' | 'pause' | 'resume' | 'stop' | 'recall' | 'close' | 'delete' | 'update';

const { DRAFT, RUNNING, PAUSED, STOPPED, COMPLETED, FAILED, CLOSED } = TaskStatus;

/** From which states each operation is allowed (D10). */
export const ALLOWED_FROM: Record<TaskAction, readonly TaskStatus[]> = {
  update: [DRAFT],
  publish: [DRAFT],
  pause: [RUNNING],
  resume: [PAUSED],
  stop: [RUNNING, PAUSED],
  close: [STOPPED, COMPLETED, FAILED],
  recall: [RUNNING, PAUSED, COMPLETED],
  delete: [DRAFT, STOPPED, COMPLETED, FAILED, CLOSED],
};

export const ACTION_LABELS: Record<TaskAction, string> = {
  publish: 'Publish',
  pause: 'Pause',
  resume: 'Resume',
  stop: 'Stop',
  recall: 'Recall failed',
  close: 'Close',
  delete: 'Delete',
  update: 'Edit',
};

/** Display order of the buttons. */
export const ACTION_ORDER: readonly TaskAction[] = ['update', 'publish', 'pause', 'resume', 'stop', 'recall', 'close', 'delete'];

export function allows(status: number, action: TaskAction): boolean {
  return ALLOWED_FROM[action].includes(status);
}

/** The actions offered for a task in `status`, in display order. */
export function actionsFor(status: number): TaskAction[] {
  return ACTION_ORDER.filter((a) => allows(status, a));
}

function list(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

const PAST: Record<TaskAction, string> = {
  publish: 'published',
  pause: 'paused',
  resume: 'resumed',
  stop: 'stopped',
  close: 'closed',
  delete: 'deleted',
  recall: 'recalled (its failed contacts dialled again)',
  update: 'edited',
};

/** A sentence naming the states that allow `action`. */
export function allowedStatesSentence(action: TaskAction): string {
  const names = ALLOWED_FROM[action].map((s) => statusName(s));
  return `A task can only be ${PAST[action]} when it is ${list(names)}.`;
}
