// A task's dialing mode in the form (D30): its values, the checks made before sending, what is
// sent, and the abandonment rate against the task's target.
import { describe, expect, it } from 'vitest';
import { dialingModeValues, type TaskView } from '../src/api/types';
import {
  atOrOverTarget,
  DIALING_MODE_LABELS,
  isPaced,
  pacingBody,
  pacingFrom,
  pacingProblem,
  queueLabel,
  targetPercent,
  type Pacing,
} from '../src/state/pacing';

const pacing = (patch: Partial<Pacing>): Pacing => ({ ...pacingFrom(), ...patch });

describe('dialing mode', () => {
  it('has words for every mode of the contract, and only agentless is not paced', () => {
    expect(Object.keys(DIALING_MODE_LABELS).sort()).toEqual([...dialingModeValues].sort());
    expect(dialingModeValues.filter((m) => !isPaced(m))).toEqual(['AGENTLESS']);
    expect(isPaced(undefined)).toBe(false);
  });

  it('starts a new task agentless with the API’s defaults, and a draft with its own', () => {
    expect(pacingFrom()).toEqual({ mode: 'AGENTLESS', queueId: '', callsPerAgent: '1', abandonmentTarget: '3' });
    const draft = { dialingMode: 'PREDICTIVE', queueId: 'q-1', callsPerAgent: 1.25, abandonmentTarget: 2.5 } as TaskView;
    expect(pacingFrom(draft)).toEqual({ mode: 'PREDICTIVE', queueId: 'q-1', callsPerAgent: '1.25', abandonmentTarget: '2.5' });
  });

  it.each<[Partial<Pacing>, string | null]>([
    [{ mode: 'AGENTLESS', callsPerAgent: '9' }, null],
    [{ mode: 'PROGRESSIVE' }, 'Queue is required when the dialing mode is Progressive.'],
    [{ mode: 'PREDICTIVE' }, 'Queue is required when the dialing mode is Predictive.'],
    [{ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '3' }, null],
    [{ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '3.004' }, null],
    [{ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '3.01' }, 'Calls per agent must be a number from 1 to 3.'],
    [{ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '0.9' }, 'Calls per agent must be a number from 1 to 3.'],
    [{ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '' }, 'Calls per agent must be a number from 1 to 3.'],
    // A predictive task's calls per agent is neither shown nor sent: not checked.
    [{ mode: 'PREDICTIVE', queueId: 'q', callsPerAgent: '', abandonmentTarget: '0' }, null],
    [{ mode: 'PREDICTIVE', queueId: 'q', abandonmentTarget: '10' }, null],
    [{ mode: 'PREDICTIVE', queueId: 'q', abandonmentTarget: '10.5' }, 'Abandonment target (%) must be a number from 0 to 10.'],
    [{ mode: 'PREDICTIVE', queueId: 'q', abandonmentTarget: 'x' }, 'Abandonment target (%) must be a number from 0 to 10.'],
  ])('checks %j: %s', (patch, problem) => {
    expect(pacingProblem(pacing(patch))).toBe(problem);
  });

  it('sends nothing for a new agentless task, and the mode with a cleared queue for an edited one', () => {
    expect(pacingBody(pacing({ queueId: 'q' }), false)).toEqual({});
    expect(pacingBody(pacing({ queueId: 'q' }), true)).toEqual({ dialingMode: 'AGENTLESS', queueId: '' });
  });

  it('sends a paced mode’s queue and its own number, new or edited', () => {
    for (const editing of [false, true]) {
      expect(pacingBody(pacing({ mode: 'PROGRESSIVE', queueId: 'q', callsPerAgent: '1.5', abandonmentTarget: '4' }), editing)).toEqual({
        dialingMode: 'PROGRESSIVE',
        queueId: 'q',
        callsPerAgent: 1.5,
      });
      expect(pacingBody(pacing({ mode: 'PREDICTIVE', queueId: 'q', callsPerAgent: '2', abandonmentTarget: '2.5' }), editing)).toEqual({
        dialingMode: 'PREDICTIVE',
        queueId: 'q',
        abandonmentTarget: 2.5,
      });
    }
  });

  it('names a queue as the tenant’s settings do, else by its id', () => {
    const settings = { callerIds: [], contactFlows: [], queues: [{ id: 'q-1', name: 'Renewals team' }] };
    expect(queueLabel('q-1', settings)).toBe('Renewals team (q-1)');
    expect(queueLabel('q-9', settings)).toBe('q-9');
    expect(queueLabel('q-1', null)).toBe('q-1');
    expect(queueLabel(null, settings)).toBe('None');
  });
});

describe('abandonment against the target', () => {
  it('shows a target as the percentage it is', () => {
    expect(targetPercent(3)).toBe('3%');
    expect(targetPercent(2.5)).toBe('2.5%');
    expect(targetPercent(0.25)).toBe('0.25%');
  });

  it.each([
    [0.0299, 3, false],
    [0.03, 3, true],
    [0.0421, 3, true],
    [0.025, 2.5, true],
    [0.0249, 2.5, false],
    [0, 3, false],
    // No abandoned call is within any target, even 0%.
    [0, 0, false],
    [0.0001, 0, true],
  ])('a rate of %f against a target of %f%% is at or over it: %s', (rate, target, over) => {
    expect(atOrOverTarget(rate, target)).toBe(over);
  });
});
