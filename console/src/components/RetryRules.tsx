import { retryableReasonValues, type RetryableReason, type RetryRule } from '../api/types';
import { humanize } from '../format';

export interface RuleRow {
  reason: RetryableReason;
  delaySeconds: string;
  maxAttempts: string;
}

export function rowsFromRules(rules: RetryRule[] | null | undefined): RuleRow[] {
  return (rules ?? []).map((r) => ({
    reason: r.reason,
    delaySeconds: r.delaySeconds == null ? '' : String(r.delaySeconds),
    maxAttempts: r.maxAttempts == null ? '' : String(r.maxAttempts),
  }));
}

export function rulesFromRows(rows: RuleRow[]): RetryRule[] {
  return rows.map((r) => {
    const rule: RetryRule = { reason: r.reason };
    if (r.delaySeconds.trim()) rule.delaySeconds = Number(r.delaySeconds);
    if (r.maxAttempts.trim()) rule.maxAttempts = Number(r.maxAttempts);
    return rule;
  });
}

/** Rows of reason + delay seconds + max attempts; at most one rule per reason, six in all. */
export function RetryRulesEditor(props: { rows: RuleRow[]; onChange: (rows: RuleRow[]) => void }) {
  const { rows, onChange } = props;
  const used = new Set(rows.map((r) => r.reason));
  const free = retryableReasonValues.filter((r) => !used.has(r));
  const set = (i: number, patch: Partial<RuleRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset class="wide">
      <legend>Retry rules (optional)</legend>
      <p class="muted">
        After an attempt that ended for a reason, wait this long instead of the call interval, and stop after this many attempts.
      </p>
      {rows.map((row, i) => (
        <div class="buttons rule" key={i} role="group" aria-label={`Retry rule ${i + 1}`}>
          <label>
            Reason{' '}
            <select value={row.reason} onChange={(e) => set(i, { reason: e.currentTarget.value as RetryableReason })}>
              {retryableReasonValues.filter((r) => r === row.reason || !used.has(r)).map((r) => (
                <option key={r} value={r}>
                  {humanize(r)}
                </option>
              ))}
            </select>
          </label>
          <label>
            Delay (seconds){' '}
            <input type="number" min={10} max={604800} size={8} value={row.delaySeconds} onInput={(e) => set(i, { delaySeconds: e.currentTarget.value })} />
          </label>
          <label>
            Max attempts{' '}
            <input type="number" min={1} max={10} size={4} value={row.maxAttempts} onInput={(e) => set(i, { maxAttempts: e.currentTarget.value })} />
          </label>
          <button type="button" class="secondary small" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove rule {i + 1}
          </button>
        </div>
      ))}
      {free.length > 0 && (
        <button type="button" class="secondary small" onClick={() => onChange([...rows, { reason: free[0], delaySeconds: '', maxAttempts: '' }])}>
          Add retry rule
        </button>
      )}
    </fieldset>
  );
}
