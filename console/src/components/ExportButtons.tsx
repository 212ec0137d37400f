import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import type { ExportFormat, Redirect } from '../api/endpoints';
import { exportFormatValues, type ExportView, type JobStarted } from '../api/types';
import { downloadFile } from '../lib/download';
import { ErrorAlert } from './Alert';
import { usePolling } from './hooks';

/** Each format's name on screen. */
const FORMAT_LABELS: Record<ExportFormat, string> = { csv: 'CSV', excel: 'Excel' };

/** "Export CSV", "Export Excel" (direct) and "Start export job" (polled until done). */
export function ExportButtons(props: {
  /** The direct export in `format` (a call of the client's `file`). */
  download: (format: ExportFormat, redirect: Redirect) => Promise<Response>;
  baseName: string;
  startJob: (format: ExportFormat) => Promise<JobStarted>;
  children?: ComponentChildren;
}) {
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [job, setJob] = useState<ExportView | null>(null);
  // The export job being followed, from its start until it is no longer PROCESSING.
  const [jobId, setJobId] = useState<string | null>(null);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);

  async function direct(fmt: ExportFormat) {
    setBusy(true);
    setError(null);
    setMessage(`Preparing the ${FORMAT_LABELS[fmt]} file…`);
    try {
      const name = await downloadFile((redirect) => props.download(fmt, redirect), `${props.baseName}.${fmt === 'csv' ? 'csv' : 'xlsx'}`);
      setMessage(`Downloaded ${name}.`);
    } catch (e) {
      setMessage(null);
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  async function startJob() {
    setError(null);
    setMessage(null);
    setJob(null);
    try {
      const { exportId } = await props.startJob(format);
      if (alive.current) setJobId(exportId);
    } catch (e) {
      if (alive.current) setError(e);
    }
  }

  // Every second, for at most ten minutes.
  usePolling(
    async (signal) => {
      if (!jobId) return false;
      try {
        const view = await API.getExport(jobId);
        if (signal.aborted) return;
        setJob(view);
        return view.status === 'PROCESSING';
      } catch (e) {
        if (!signal.aborted) setError(e);
        return false;
      }
    },
    { every: 1000, active: jobId !== null, limit: 600 },
    [jobId],
  );

  return (
    <div class="stack export">
      {props.children}
      <div class="buttons">
        <button type="button" class="secondary" disabled={busy} onClick={() => void direct('csv')}>
          Export CSV
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => void direct('excel')}>
          Export Excel
        </button>
      </div>
      <div class="buttons">
        <label>
          Job format{' '}
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value as ExportFormat)}>
            {exportFormatValues.map((f) => (
              <option key={f} value={f}>
                {FORMAT_LABELS[f]}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" disabled={job?.status === 'PROCESSING'} onClick={() => void startJob()}>
          Start export job
        </button>
      </div>
      <div role="status" aria-live="polite">
        {message && <p class="muted">{message}</p>}
        {job && job.status === 'PROCESSING' && <p class="muted">Export job: processing… (started {job.createTime})</p>}
        {job && job.status === 'SUCCEEDED' && (
          <p>
            Export job: done, {job.rowCount ?? 0} rows.{' '}
            {job.downloadUrl && (
              <a href={job.downloadUrl} download={job.fileName ?? undefined}>
                Download {job.fileName ?? 'the file'}
              </a>
            )}
          </p>
        )}
      </div>
      {job && job.status === 'FAILED' && <ErrorAlert error={new Error(`Export job failed: ${job.error ?? 'no reason given'}`)} />}
      <ErrorAlert error={error} />
    </div>
  );
}

