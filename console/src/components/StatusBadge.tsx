import { statusName } from '../format';

export function StatusBadge({ status, testId }: { status: number; testId?: string }) {
  return (
    <span class={`badge s${status}`} data-testid={testId}>
      {statusName(status)}
    </span>
  );
}
