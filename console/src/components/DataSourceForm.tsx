import { useState } from 'preact/hooks';
import type { DataSource } from '../api/types';
import { FormFooter } from './FormFooter';

export interface DataSourceFields {
  dataSourceName: string;
  dataSourceDesc: string;
  defaultCountry: string | null;
}

/** The fields shared by "New data source" and a row's Edit. */
export function DataSourceForm(props: {
  label: string;
  initial?: DataSource;
  submitLabel: string;
  busy: boolean;
  onSubmit: (fields: DataSourceFields) => void;
  onCancel: () => void;
}) {
  const { initial } = props;
  const [name, setName] = useState(initial?.dataSourceName ?? '');
  const [desc, setDesc] = useState(initial?.dataSourceDesc ?? '');
  const [country, setCountry] = useState(initial?.defaultCountry ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  const prefix = initial ? `ds-edit-${initial.id}` : 'ds-new';

  function submit(e: Event) {
    e.preventDefault();
    const c = country.trim().toUpperCase();
    if (!name.trim()) return setProblem('Name is required.');
    if (c && !/^[A-Z]{2}$/.test(c)) return setProblem('Default country must be two letters (ISO 3166 alpha-2), e.g. US.');
    setProblem(null);
    props.onSubmit({ dataSourceName: name.trim(), dataSourceDesc: desc.trim(), defaultCountry: c || null });
  }

  return (
    <form class="card form-grid" aria-label={props.label} onSubmit={submit}>
      <div class="field">
        <label for={`${prefix}-name`}>Name</label>
        <input id={`${prefix}-name`} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${prefix}-desc`}>Description</label>
        <input id={`${prefix}-desc`} maxLength={500} value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${prefix}-country`}>Default country</label>
        <input
          id={`${prefix}-country`}
          maxLength={2}
          size={4}
          autocomplete="off"
          aria-describedby={`${prefix}-country-hint`}
          value={country}
          onInput={(e) => setCountry(e.currentTarget.value)}
        />
        <small id={`${prefix}-country-hint`}>Optional, two letters (ISO 3166), e.g. US.</small>
      </div>
      <FormFooter problem={problem} busy={props.busy} submitLabel={props.submitLabel} onCancel={props.onCancel} />
    </form>
  );
}
