import { useEffect, useRef, useState } from 'preact/hooks';
import * as API from '../api/endpoints';
import { ApiError } from '../api/client';
import type { ImportReport, ImportStatus } from '../api/types';
import { ErrorAlert } from './Alert';
import { usePolling } from './hooks';
import { ImportReportView } from './ImportReport';

type Phase = 'idle' | 'REQUESTING' | 'UPLOADING' | ImportStatus;

const PROGRESS: Record<Phase, number> = {
  idle: 0,
  REQUESTING: 0.1,
  UPLOADING: 0.25,
  WAITING_UPLOAD: 0.4,
  PROCESSING: 0.7,
  SUCCEEDED: 1,
  FAILED: 1,
};

const PHASE_TEXT: Record<Phase, string> = {
  idle: '',
  REQUESTING: 'Asking for an upload address',
  UPLOADING: 'Uploading the file',
  WAITING_UPLOAD: 'WAITING_UPLOAD: waiting for the upload to arrive',
  PROCESSING: 'PROCESSING: reading the rows',
  SUCCEEDED: 'SUCCEEDED: the import is done',
  FAILED: 'FAILED: the file was refused',
};

/** The import's status is read every second, for at most half an hour. */
const POLL_MS = 1000;
const POLL_LIMIT = 1800;

/** Import through the importUrl flow (D8): presigned PUT, then poll the import until it is done. */
export function ImportPanel(props: { dataSourceId: string; onImported: () => void }) {
  const [phase, setPhase] = useState<Phase>('idle');
  const [fileName, setFileName] = useState<string | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [over, setOver] = useState(false);
  // The import being followed, once its file is uploaded.
  const [following, setFollowing] = useState<{ dataSourceId: string; importId: string } | null>(null);
  const alive = useRef(true);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => () => void (alive.current = false), []);

  const busy = phase !== 'idle' && phase !== 'SUCCEEDED' && phase !== 'FAILED';

  async function run(file: File) {
    if (busy) return;
    setFileName(file.name);
    setReport(null);
    setError(null);
    setPhase('REQUESTING');
    try {
      const ticket = await API.importUrl(props.dataSourceId, file.name, file.size);
      if (!alive.current) return;
      setPhase('UPLOADING');
      const headers = new Headers();
      for (const [k, v] of Object.entries(ticket.headers ?? {})) {
        // Content-Length is set by the browser from the body.
        if (k.toLowerCase() !== 'content-length' && typeof v === 'string') headers.set(k, v);
      }
      let res: Response;
      try {
        res = await fetch(ticket.uploadUrl, { method: ticket.method || 'PUT', headers, body: file });
      } catch {
        throw new ApiError(0, 0, 'The upload could not be sent to storage. Check your connection and try again.');
      }
      if (!res.ok) throw new ApiError(res.status, res.status, `The upload was refused by storage (HTTP ${res.status}).`);
      if (alive.current) setFollowing({ dataSourceId: props.dataSourceId, importId: ticket.importId });
    } catch (e) {
      if (!alive.current) return;
      setPhase('FAILED');
      setError(e);
    }
  }

  // The uploaded import, until it has SUCCEEDED or FAILED.
  usePolling(
    async (signal) => {
      if (!following) return false;
      try {
        const view = await API.getImport(following.dataSourceId, following.importId);
        if (signal.aborted) return;
        setPhase(view.status);
        if (view.status === 'SUCCEEDED') {
          setReport(view.result ?? null);
          props.onImported();
          return false;
        }
        if (view.status === 'FAILED') {
          setError(new Error(`The import failed: ${view.error ?? 'no reason given'}`));
          props.onImported();
          return false;
        }
      } catch (e) {
        if (signal.aborted) return;
        setPhase('FAILED');
        setError(e);
        return false;
      }
    },
    { every: POLL_MS, active: following !== null, limit: POLL_LIMIT },
    [following],
  );

  function take(files: FileList | null | undefined) {
    const file = files?.[0];
    if (file) void run(file);
  }

  return (
    <div class="stack import">
      <div
        class={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
          setOver(true);
        }}
        onDragEnter={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          take(e.dataTransfer?.files);
        }}
      >
        <p>Drop a CSV or Excel file here</p>
        <label for={`import-file-${props.dataSourceId}`}>Choose a file to import</label>
        <input
          ref={input}
          id={`import-file-${props.dataSourceId}`}
          type="file"
          accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          disabled={busy}
          onChange={(e) => {
            take(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
        <small>The first row holds the titles; it needs a phoneNumber (or phone, mobile) column. Up to 20 MiB.</small>
      </div>
      {phase !== 'idle' && (
        <div>
          <progress aria-label="Import progress" max={1} value={PROGRESS[phase]} />
          <p role="status" aria-live="polite" class="muted">
            {fileName}: {PHASE_TEXT[phase]}
          </p>
        </div>
      )}
      <ErrorAlert error={error} />
      {report && <ImportReportView report={report} />}
    </div>
  );
}
