import type { ComponentChildren } from 'preact';
import { dialingModeValues, type DialingMode, type Settings } from '../api/types';
import { ABANDONMENT_TARGET, CALLS_PER_AGENT, DIALING_MODE_LABELS, isPaced, type Pacing } from '../state/pacing';

/** What each mode does, under the mode's select. */
const MODE_HINTS: Record<DialingMode, string> = {
  AGENTLESS: 'Each answered call stays with the contact flow.',
  PROGRESSIVE: 'Answered calls go to the queue’s agents; calls are placed only for free agents.',
  PREDICTIVE: 'Answered calls go to the queue’s agents; calls are placed ahead of agents becoming free, abandoned calls held under the target.',
};

/**
 * A task's dialing mode in the task form (D30): agentless, or paced to one of the tenant's queues
 * (from its settings), with the mode's own number: calls per agent (progressive) or the
 * abandonment target (predictive). The queue and the number are shown, and required, only for
 * the modes that use them.
 */
export function PacingFields(props: { prefix: string; value: Pacing; onChange: (value: Pacing) => void; settings: Settings | null }) {
  const { prefix: p, value, settings } = props;
  const set = (patch: Partial<Pacing>) => props.onChange({ ...value, ...patch });
  const queues = settings?.queues ?? [];
  const unknownQueue = value.queueId && !queues.some((q) => q.id === value.queueId);
  const paced = isPaced(value.mode);
  return (
    <fieldset class="wide">
      <legend>Dialing</legend>
      <div class="form-grid">
        <div class="field">
          <label for={`${p}-mode`}>Dialing mode</label>
          <select id={`${p}-mode`} value={value.mode} aria-describedby={`${p}-mode-hint`} onChange={(e) => set({ mode: e.currentTarget.value as DialingMode })}>
            {dialingModeValues.map((m) => (
              <option key={m} value={m}>
                {DIALING_MODE_LABELS[m]}
              </option>
            ))}
          </select>
          <small id={`${p}-mode-hint`}>{MODE_HINTS[value.mode]}</small>
        </div>
        {paced && (
          <div class="field">
            <label for={`${p}-queue`}>Queue</label>
            <select id={`${p}-queue`} required value={value.queueId} onChange={(e) => set({ queueId: e.currentTarget.value })}>
              <option value="">Choose a queue</option>
              {unknownQueue && <option value={value.queueId}>{value.queueId}</option>}
              {queues.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name}
                </option>
              ))}
            </select>
            {settings && queues.length === 0 && <small>No agent queue is assigned to your organisation yet: the operator assigns them.</small>}
          </div>
        )}
        {value.mode === 'PROGRESSIVE' && (
          <PacingNumber id={`${p}-cpa`} label="Calls per agent" bounds={CALLS_PER_AGENT} value={value.callsPerAgent} onInput={(v) => set({ callsPerAgent: v })}>
            Calls ringing for each free agent, {CALLS_PER_AGENT.min} to {CALLS_PER_AGENT.max}.
          </PacingNumber>
        )}
        {value.mode === 'PREDICTIVE' && (
          <PacingNumber
            id={`${p}-abandon`}
            label="Abandonment target (%)"
            bounds={ABANDONMENT_TARGET}
            value={value.abandonmentTarget}
            onInput={(v) => set({ abandonmentTarget: v })}
          >
            The most calls a person answers and no agent takes, as a share of the answered calls: {ABANDONMENT_TARGET.min} to{' '}
            {ABANDONMENT_TARGET.max}.
          </PacingNumber>
        )}
      </div>
    </fieldset>
  );
}

/** A mode's number (calls per agent, abandonment target): required, within its bounds, kept to
 *  two decimals as the API keeps it. */
function PacingNumber(props: {
  id: string;
  label: string;
  bounds: { min: number; max: number };
  value: string;
  onInput: (value: string) => void;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="number"
        required
        min={props.bounds.min}
        max={props.bounds.max}
        step={0.01}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <small>{props.children}</small>
    </div>
  );
}
