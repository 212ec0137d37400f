// @vitest-environment happy-dom
// The components that poll through usePolling: an import until it is done, an export job until
// it is no longer PROCESSING (one read a second, at once first).
import { act, cleanup, fireEvent, render, screen } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ExportView, ImportView } from '../src/api/types';
import { ExportButtons } from '../src/components/ExportButtons';
import { ImportPanel } from '../src/components/ImportPanel';
import { fakeApi } from './support/fakeApi';
import { wait } from './support/timers';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('export job', () => {
  it('reads the job every second until it is done, then offers its download', async () => {
    const views: ExportView['status'][] = ['PROCESSING', 'PROCESSING', 'SUCCEEDED'];
    const sent = fakeApi({
      'GET /api/export/exp-1': () => ({
        exportId: 'exp-1',
        status: views.shift(),
        fileName: 'task.csv',
        rowCount: 3,
        downloadUrl: 'https://bucket.test/task.csv',
        createTime: '2030-01-01T00:00:00Z',
        updateTime: '2030-01-01T00:00:00Z',
      }),
    });
    const startJob = vi.fn(async () => ({ exportId: 'exp-1' }));
    render(<ExportButtons download={vi.fn()} baseName="task" startJob={startJob} />);
    fireEvent.change(screen.getByRole('combobox', { name: /Job format/ }), { target: { value: 'excel' } });
    fireEvent.click(screen.getByRole('button', { name: 'Start export job' }));
    await wait(0);
    expect(startJob).toHaveBeenCalledWith('excel');
    const reads = () => sent.filter((s) => s.path === '/api/export/exp-1').length;
    expect(reads()).toBe(1);
    expect(screen.getByText(/Export job: processing/)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Start export job' })).toHaveProperty('disabled', true);
    await wait(999);
    expect(reads()).toBe(1);
    await wait(1);
    expect(reads()).toBe(2);
    await wait(1000);
    expect(reads()).toBe(3);
    expect(screen.getByRole('link', { name: 'Download task.csv' }).getAttribute('href')).toBe('https://bucket.test/task.csv');
    await wait(10_000);
    expect(reads()).toBe(3);
  });
});

describe('import', () => {
  it('uploads the file, then reads the import every second until it succeeds', async () => {
    const upload = vi.fn(async (_url: string, _init: RequestInit) => new Response(null, { status: 200 }));
    vi.stubGlobal('fetch', upload);
    const views: ImportView['status'][] = ['WAITING_UPLOAD', 'PROCESSING', 'SUCCEEDED'];
    const sent = fakeApi({
      'POST /api/dataSource/ds-1/contact/importUrl': () => ({
        importId: 'imp-1',
        uploadUrl: 'https://bucket.test/upload',
        method: 'PUT',
        headers: { 'Content-Length': '12', 'Content-Type': 'text/csv' },
        expiresAt: '2030-01-01T00:10:00Z',
      }),
      'GET /api/dataSource/ds-1/contact/import/imp-1': () => {
        const status = views.shift();
        return {
          importId: 'imp-1',
          status,
          fileName: 'contacts.csv',
          createTime: '2030-01-01T00:00:00Z',
          updateTime: '2030-01-01T00:00:00Z',
          result: status === 'SUCCEEDED' ? { importCount: 6, successCount: 5, failCount: 1, details: [] } : null,
        };
      },
    });
    const onImported = vi.fn();
    render(<ImportPanel dataSourceId="ds-1" onImported={onImported} />);
    const file = new File(['phoneNumber\n'], 'contacts.csv', { type: 'text/csv' });
    fireEvent.change(screen.getByLabelText('Choose a file to import'), { target: { files: [file] } });
    await wait(0);
    expect(sent[0].body).toEqual({ fileName: 'contacts.csv', fileSize: 12 });
    expect(upload).toHaveBeenCalledTimes(1);
    const [url, init] = upload.mock.calls[0];
    expect(url).toBe('https://bucket.test/upload');
    expect(init.method).toBe('PUT');
    expect(new Headers(init.headers).get('Content-Type')).toBe('text/csv');
    expect(new Headers(init.headers).has('Content-Length')).toBe(false);
    const reads = () => sent.filter((s) => s.path.endsWith('/import/imp-1')).length;
    expect(reads()).toBe(1);
    expect(screen.getByRole('status').textContent).toBe('contacts.csv: WAITING_UPLOAD: waiting for the upload to arrive');
    await wait(1000);
    expect(reads()).toBe(2);
    expect(screen.getByRole('status').textContent).toBe('contacts.csv: PROCESSING: reading the rows');
    expect(onImported).not.toHaveBeenCalled();
    await wait(1000);
    expect(reads()).toBe(3);
    expect(screen.getByRole('status').textContent).toBe('contacts.csv: SUCCEEDED: the import is done');
    expect((screen.getByRole('progressbar', { name: 'Import progress' }) as HTMLProgressElement).value).toBe(1);
    expect(screen.getByRole('heading', { name: 'Import report' })).toBeTruthy();
    expect(onImported).toHaveBeenCalledTimes(1);
    await wait(10_000);
    expect(reads()).toBe(3);
  });

  it('stops reading the import when the panel goes away', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(null, { status: 200 })));
    const sent = fakeApi({
      'POST /api/dataSource/ds-1/contact/importUrl': () => ({
        importId: 'imp-2',
        uploadUrl: 'https://bucket.test/upload',
        method: 'PUT',
        headers: { 'Content-Length': '1' },
        expiresAt: '2030-01-01T00:10:00Z',
      }),
      'GET /api/dataSource/ds-1/contact/import/imp-2': () => ({
        importId: 'imp-2',
        status: 'PROCESSING',
        fileName: 'a.csv',
        createTime: '2030-01-01T00:00:00Z',
        updateTime: '2030-01-01T00:00:00Z',
      }),
    });
    const { unmount } = render(<ImportPanel dataSourceId="ds-1" onImported={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Choose a file to import'), { target: { files: [new File(['x'], 'a.csv')] } });
    await wait(0);
    await wait(2000);
    const reads = () => sent.filter((s) => s.path.endsWith('/import/imp-2')).length;
    expect(reads()).toBe(3);
    act(() => {
      unmount();
    });
    await wait(10_000);
    expect(reads()).toBe(3);
  });
});
