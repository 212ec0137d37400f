import type { ResultAttribute, TaskResults } from '../api/types';
import { count, percent } from '../format';
import { resultRows } from '../state/results';

/** The "Results" section (D22): per result attribute, its values as bars with a table beside them. */
export function TaskResultsView({ results }: { results: TaskResults | null }) {
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      <p class="muted">What the flow set on each contact’s latest answered call.</p>
      {!results ? (
        <p class="muted">Loading results…</p>
      ) : (
        results.attributes.map((attribute) => <ResultAttributeView key={attribute.name} attribute={attribute} />)
      )}
    </section>
  );
}

function ResultAttributeView({ attribute }: { attribute: ResultAttribute }) {
  const { rows, total } = resultRows(attribute);
  const max = Math.max(1, ...rows.map((r) => r.count));
  const id = `result-${attribute.name}`;
  return (
    <div class="card" role="group" aria-labelledby={id}>
      <h3 id={id}>{attribute.name}</h3>
      {total === 0 ? (
        <p class="muted">No answered call yet.</p>
      ) : (
        <div class="split">
          <ul class="bars results" aria-hidden="true" data-testid={`${id}-bars`}>
            {rows.map((r) => (
              <li key={`${r.aside ? 'aside' : 'value'}:${r.label}`} class={r.aside ? 'aside' : undefined}>
                <span title={r.label}>{r.label}</span>
                <span class="bar">
                  <span style={{ width: `${(r.count / max) * 100}%` }} />
                </span>
                <span class="num">{count(r.count)}</span>
              </li>
            ))}
          </ul>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">{attribute.name}: values among {count(total)} answered contacts</caption>
              <thead>
                <tr>
                  <th scope="col">Value</th>
                  <th scope="col" class="num">
                    Count
                  </th>
                  <th scope="col" class="num">
                    Share
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={`${r.aside ? 'aside' : 'value'}:${r.label}`} class={r.aside ? 'aside' : undefined}>
                    <th scope="row">{r.label}</th>
                    <td class="num">{count(r.count)}</td>
                    <td class="num">{percent(r.share)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </div>
  );
}
