// @vitest-environment happy-dom
import { act, cleanup, render } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { usePolling, type PollingOptions } from '../src/components/hooks';

type Tick = (signal: AbortSignal) => Promise<boolean | void>;

function Poller(props: PollingOptions & { tick: Tick; dep?: unknown }) {
  usePolling(props.tick, { every: props.every, active: props.active, limit: props.limit }, [props.dep]);
  return null;
}

let hidden = false;

function setHidden(value: boolean) {
  hidden = value;
  act(() => {
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

/** Lets timers and the promises they settle run for `ms`. */
async function wait(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

beforeEach(() => {
  hidden = false;
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => (hidden ? 'hidden' : 'visible'));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('usePolling', () => {
  it('ticks at once, then `every` ms after each tick has ended', async () => {
    const tick = vi.fn<Tick>(() => new Promise((resolve) => setTimeout(resolve, 500)));
    render(<Poller tick={tick} every={3000} />);
    expect(tick).toHaveBeenCalledTimes(1);
    await wait(500 + 2999);
    expect(tick).toHaveBeenCalledTimes(1);
    await wait(1);
    expect(tick).toHaveBeenCalledTimes(2);
    await wait(3500);
    expect(tick).toHaveBeenCalledTimes(3);
  });

  it('pauses while the tab is hidden and ticks at once when it shows again', async () => {
    const tick = vi.fn<Tick>(async () => {});
    render(<Poller tick={tick} every={1000} />);
    await wait(1000);
    expect(tick).toHaveBeenCalledTimes(2);
    setHidden(true);
    await wait(10_000);
    expect(tick).toHaveBeenCalledTimes(2);
    setHidden(false);
    expect(tick).toHaveBeenCalledTimes(3);
    await wait(1000);
    expect(tick).toHaveBeenCalledTimes(4);
  });

  it('stops on unmount and aborts the tick in flight', async () => {
    let signal: AbortSignal | undefined;
    const tick = vi.fn<Tick>((s) => {
      signal = s;
      return new Promise((resolve) => setTimeout(resolve, 200));
    });
    const { unmount } = render(<Poller tick={tick} every={1000} />);
    act(() => {
      unmount();
    });
    expect(signal?.aborted).toBe(true);
    await wait(10_000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('stops when a tick answers false, and stays stopped when the tab shows again', async () => {
    let n = 0;
    const tick = vi.fn<Tick>(async () => ++n < 3);
    render(<Poller tick={tick} every={1000} />);
    await wait(10_000);
    expect(tick).toHaveBeenCalledTimes(3);
    setHidden(true);
    setHidden(false);
    await wait(10_000);
    expect(tick).toHaveBeenCalledTimes(3);
  });

  it('stops after `limit` ticks', async () => {
    const tick = vi.fn<Tick>(async () => true);
    render(<Poller tick={tick} every={1000} limit={4} />);
    await wait(60_000);
    expect(tick).toHaveBeenCalledTimes(4);
  });

  it('waits while inactive and starts afresh when its deps change', async () => {
    const tick = vi.fn<Tick>(async () => false);
    const { rerender } = render(<Poller tick={tick} every={1000} active={false} dep="a" />);
    await wait(5000);
    expect(tick).not.toHaveBeenCalled();
    rerender(<Poller tick={tick} every={1000} active dep="a" />);
    expect(tick).toHaveBeenCalledTimes(1);
    await wait(5000);
    expect(tick).toHaveBeenCalledTimes(1);
    rerender(<Poller tick={tick} every={1000} active dep="b" />);
    expect(tick).toHaveBeenCalledTimes(2);
  });

  it('starts afresh at once when `every` changes', async () => {
    const tick = vi.fn<Tick>(async () => {});
    const { rerender } = render(<Poller tick={tick} every={3000} />);
    await wait(3000);
    expect(tick).toHaveBeenCalledTimes(2);
    rerender(<Poller tick={tick} every={10_000} />);
    expect(tick).toHaveBeenCalledTimes(3);
    await wait(9999);
    expect(tick).toHaveBeenCalledTimes(3);
    await wait(1);
    expect(tick).toHaveBeenCalledTimes(4);
  });
});
