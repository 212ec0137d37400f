// Fake time for the components that poll (vi.useFakeTimers on setTimeout and clearTimeout).
import { act } from '@testing-library/preact';
import { vi } from 'vitest';

/** Lets timers and the promises they settle run for `ms`. */
export async function wait(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
  // What that set off settles too: each act renders, and runs the effects, of the one before.
  for (let i = 0; i < 5; i++) {
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0);
    });
  }
}
