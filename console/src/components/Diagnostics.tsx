import type { Diagnostics } from '../api/types';
import { blockedSentence, partitionSentence, skipSentences } from '../state/diagnostics';
import { count, humanize } from '../format';

/** "Why isn't it dialling?" in plain words (D19). */
export function DiagnosticsView({ diag }: { diag: Diagnostics | null }) {
  return (
    <section aria-labelledby="diag-heading">
      <h2 id="diag-heading">Why isn't it dialling?</h2>
      {!diag ? (
        <p class="muted">Loading diagnostics…</p>
      ) : (
        <div class="card">
          <p data-testid="diagnosis">
            <strong>{blockedSentence(diag.blockedBy, diag.status)}</strong>
          </p>
          {diag.nextDialTime && <p>The next contact becomes due at {diag.nextDialTime}.</p>}
          {diag.inFlight > 0 && <p>{count(diag.inFlight)} calls are in flight now.</p>}
          <p>{partitionSentence(diag.contacts)}</p>
          <dl class="figures">
            {(
              [
                ['Not dialled', diag.contacts.notDialled],
                ['Waiting', diag.contacts.waiting],
                ['In flight', diag.contacts.inFlight],
                ['Final', diag.contacts.final],
              ] as const
            ).map(([label, n]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>{count(n)}</dd>
              </div>
            ))}
          </dl>
          {skipSentences(diag.skips).length > 0 ? (
            <ul>
              {skipSentences(diag.skips).map((s) => (
                <li key={s}>{s}</li>
              ))}
            </ul>
          ) : (
            <p class="muted">No contact is skipped.</p>
          )}
          <p class="muted">
            Last call placed: {diag.lastCallTime ?? 'none yet'}. Last outcome: {diag.lastOutcomeTime ?? 'none yet'}.
          </p>
        </div>
      )}
    </section>
  );
}

/** Attempts by the reason they ended, as a small bar list. */
export function ReasonBars({ reasons }: { reasons: Diagnostics['reasons'] | null }) {
  const entries = reasons ? (Object.entries(reasons) as [string, number][]) : [];
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return (
    <section aria-labelledby="reasons-heading">
      <h2 id="reasons-heading">Outcome reasons</h2>
      {entries.length === 0 ? (
        <p class="muted">No attempts yet.</p>
      ) : (
        <ul class="bars">
          {entries.map(([reason, n]) => (
            <li key={reason}>
              <span>{humanize(reason)}</span>
              <span class="bar" aria-hidden="true">
                <span style={{ width: `${(n / max) * 100}%` }} />
              </span>
              <span class="num">{count(n)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
