// The "Service busy, retrying in N s" notice shown while the client waits out a 503 or a 429.
import { useEffect, useState } from 'preact/hooks';

let message: string | null = null;
const listeners = new Set<(m: string | null) => void>();

export function setBusy(seconds: number | null): void {
  message = seconds === null ? null : `Service busy, retrying in ${seconds} s`;
  listeners.forEach((l) => l(message));
}

export function useBusyMessage(): string | null {
  const [value, setValue] = useState(message);
  useEffect(() => {
    listeners.add(setValue);
    return () => {
      listeners.delete(setValue);
    };
  }, []);
  return value;
}
