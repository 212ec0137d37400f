import type { HistoryInterval } from '../../src/api/types';

/** One interval of a task's history (D31), with the outcomes the tests name and no abandoned
 * calls or callbacks. */
export const interval = (from: string, to: string, calls: number, successes = 0, failures = 0, noAnswers = 0): HistoryInterval => ({
  from,
  to,
  callCount: calls,
  successCount: successes,
  failCount: failures,
  noAnswerCount: noAnswers,
  abandonCount: 0,
  callbackCount: 0,
});
