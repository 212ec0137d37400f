import type { FilterOp } from '../api/types';
import { FILTER_OP_LABELS, FILTER_OPS, MAX_CONDITIONS, type FilterRow } from '../state/schedule';

/** The task's filter (D31): rows of field + operator + value, every one of which a contact must
 *  meet to be dialled; the others are final as "filtered". */
export function FilterEditor(props: { prefix: string; rows: FilterRow[]; fields: string[]; onChange: (rows: FilterRow[]) => void }) {
  const { rows, onChange, prefix } = props;
  const set = (i: number, patch: Partial<FilterRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const listId = `${prefix}-filter-fields`;
  return (
    <fieldset class="wide">
      <legend>Contacts to dial (optional)</legend>
      <p class="muted">Only contacts that meet every condition are dialled; the others are counted as filtered and never called.</p>
      <datalist id={listId}>
        {['phoneNumber', ...props.fields].map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
      {rows.map((row, i) => (
        <div class="buttons rule" key={i} role="group" aria-label={`Condition ${i + 1}`}>
          <label>
            Field{' '}
            <input list={listId} size={14} value={row.field} onInput={(e) => set(i, { field: e.currentTarget.value })} />
          </label>
          <label>
            Test{' '}
            <select value={row.op} onChange={(e) => set(i, { op: e.currentTarget.value as FilterOp })}>
              {FILTER_OPS.map((op) => (
                <option key={op} value={op}>
                  {FILTER_OP_LABELS[op]}
                </option>
              ))}
            </select>
          </label>
          {row.op !== 'exists' && (
            <label>
              {row.op === 'in' ? 'Values (comma-separated)' : 'Value'}{' '}
              <input size={16} value={row.value} onInput={(e) => set(i, { value: e.currentTarget.value })} />
            </label>
          )}
          <button type="button" class="secondary small" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove condition {i + 1}
          </button>
        </div>
      ))}
      {rows.length < MAX_CONDITIONS && (
        <button type="button" class="secondary small" onClick={() => onChange([...rows, { field: '', op: 'eq', value: '' }])}>
          Add condition
        </button>
      )}
    </fieldset>
  );
}
