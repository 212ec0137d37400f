import type { ComponentChildren } from 'preact';
import { ApiError } from '../api/client';
import { allowedStatesSentence, type TaskAction } from '../state/taskActions';

export interface ErrorContext {
  taskAction?: TaskAction;
  dataSourceDelete?: boolean;
}

/** Ends a message with a full stop unless it already ends a sentence. */
function sentence(message: string): string {
  const m = message.trim();
  return /[.!?]$/.test(m) ? m : `${m}.`;
}

/** The text to show for an error, with the explanations the brief asks for (405, 409). */
export function errorText(error: unknown, context: ErrorContext = {}): string {
  if (error instanceof ApiError) {
    if (error.status === 405 && context.taskAction) {
      return `${sentence(error.message)} ${allowedStatesSentence(context.taskAction)}`;
    }
    if (error.status === 409 && context.dataSourceDelete) {
      return `${sentence(error.message)} A task that is RUNNING or PAUSED still uses this data source: stop that task, then delete the data source.`;
    }
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export function ErrorAlert({ error, context }: { error: unknown; context?: ErrorContext }) {
  if (!error) return null;
  return (
    <div role="alert" class="alert">
      {errorText(error, context)}
    </div>
  );
}

/** Polite status line (progress and success messages). */
export function Status({ children }: { children?: ComponentChildren }) {
  return (
    <p role="status" class="status">
      {children}
    </p>
  );
}
