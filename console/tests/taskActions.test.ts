import { describe, expect, it } from 'vitest';
import { actionsFor, allowedStatesSentence, allows } from '../src/state/taskActions';

describe('task actions by status (D10)', () => {
  it('offers exactly the allowed actions', () => {
    expect(actionsFor(0)).toEqual(['update', 'publish', 'delete']);
    expect(actionsFor(1)).toEqual(['pause', 'stop', 'recall']);
    expect(actionsFor(2)).toEqual(['resume', 'stop', 'recall']);
    expect(actionsFor(3)).toEqual(['close', 'delete']);
    expect(actionsFor(4)).toEqual(['recall', 'close', 'delete']);
    expect(actionsFor(5)).toEqual(['close', 'delete']);
    expect(actionsFor(6)).toEqual(['delete']);
  });

  it('never offers a repeat', () => {
    expect(allows(2, 'pause')).toBe(false);
    expect(allows(1, 'resume')).toBe(false);
    expect(allows(6, 'close')).toBe(false);
  });

  it('names the states that allow an action', () => {
    expect(allowedStatesSentence('pause')).toBe('A task can only be paused when it is RUNNING.');
    expect(allowedStatesSentence('stop')).toBe('A task can only be stopped when it is RUNNING or PAUSED.');
    expect(allowedStatesSentence('close')).toBe('A task can only be closed when it is STOPPED, COMPLETED or FAILED.');
    expect(allowedStatesSentence('delete')).toContain('DRAFT, STOPPED, COMPLETED, FAILED or CLOSED');
    expect(allowedStatesSentence('update')).toBe('A task can only be edited when it is DRAFT.');
  });
});
