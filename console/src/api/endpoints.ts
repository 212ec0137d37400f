// One call per route the console uses, all through the one client (client.ts): each path is a
// path of the contract, and its parameters, body and answer are checked against it.
import type { ApiClient } from './client';
import type * as T from './types';

let client: ApiClient | null = null;

export function setClient(c: ApiClient): void {
  client = c;
}

export function api(): ApiClient {
  if (!client) throw new Error('API client not configured');
  return client;
}

export interface PageQuery {
  pageNum: number;
  pageSize: number;
  /** The previous page's `nextToken` (D5): the page after it; `pageNum` is then ignored. */
  nextToken?: string;
}

export type ExportFormat = T.ExportFormat;

/** How a download follows a 303 to a presigned address (D8): see lib/download.ts. */
export type Redirect = 'follow' | 'manual';

// Data sources
export const listDataSources = (query: PageQuery & { dataSourceName?: string }) =>
  api().get('/api/dataSource/list', { params: { query } });
export const getDataSource = (id: string) => api().get('/api/dataSource/detail/{id}', { params: { path: { id } } });
export const addDataSource = (body: T.AddDataSource) => api().post('/api/dataSource/add', { body });
export const updateDataSource = (body: T.UpdateDataSource) => api().post('/api/dataSource/update', { body });
export const deleteDataSource = (id: string) => api().post('/api/dataSource/delete', { body: { id } });

// Contacts
export const listContacts = (id: string, query: PageQuery & { phoneNumber?: string }) =>
  api().get('/api/dataSource/{id}/contacts', { params: { path: { id }, query } });
export const addContact = (id: string, body: T.ContactInput) =>
  api().post('/api/dataSource/{id}/contact/add', { params: { path: { id } }, body });
export const updateContact = (id: string, body: T.ContactUpdate) =>
  api().post('/api/dataSource/{id}/contact/update', { params: { path: { id } }, body });
export const deleteContact = (id: string, contactId: string) =>
  api().post('/api/dataSource/{id}/contact/delete', { params: { path: { id } }, body: { contactId } });
export const importUrl = (id: string, fileName: string, fileSize: number) =>
  api().post('/api/dataSource/{id}/contact/importUrl', { params: { path: { id } }, body: { fileName, fileSize } });
export const getImport = (id: string, importId: string) =>
  api().get('/api/dataSource/{id}/contact/import/{importId}', { params: { path: { id, importId } } });
export const exportDataSource = (id: string, format: ExportFormat, redirect: Redirect = 'follow') =>
  api().file('/api/dataSource/{id}/contact/batchExport', { params: { path: { id }, query: { format } }, redirect });
export const startDataSourceExportJob = (id: string, format: ExportFormat) =>
  api().post('/api/dataSource/{id}/contact/exportJob', { params: { path: { id } }, body: { format } });

// Tasks
export const listTasks = (query: PageQuery & { taskName?: string; status?: T.TaskStatus }) =>
  api().get('/api/task/list', { params: { query } });
export const getTask = (id: string) => api().get('/api/task/detail/{id}', { params: { path: { id } } });
export const addTask = (body: T.AddTask) => api().post('/api/task/add', { body });
export const updateTask = (body: T.UpdateTask) => api().post('/api/task/update', { body });
export const taskAction = (action: 'publish' | 'pause' | 'resume' | 'close' | 'delete', id: string) =>
  api().post(`/api/task/${action}`, { body: { id } });
export const stopTask = (id: string, reason?: string) =>
  api().post('/api/task/stop', { body: reason ? { id, reason } : { id } });
export const recallTask = (id: string, contactIds?: string[]) =>
  api().post('/api/task/{id}/recall', { params: { path: { id } }, body: contactIds ? { contactIds } : {} });
/** The task's callbacks (D31), in the order they were set; `status` picks them. */
export const listCallbacks = (id: string, query: PageQuery & { status?: T.CallbackStatus }) =>
  api().get('/api/task/{id}/callbacks', { params: { path: { id }, query } });
/** Promises a contact a call at `at` (RFC 3339 with its offset), or moves its pending one. */
export const setCallback = (taskId: string, contactId: string, at: string) =>
  api().post('/api/task/callback', { body: { taskId, contactId, at } });
export const cancelCallback = (taskId: string, contactId: string) =>
  api().post('/api/task/callback/cancel', { body: { taskId, contactId } });
export const getTaskStat = (id: string) => api().get('/api/task/{id}/stat', { params: { path: { id } } });
/** The task's whole campaign (D31): the outcomes of each interval since it started, and its changes of state. */
export const getTaskHistory = (id: string) => api().get('/api/task/{id}/history', { params: { path: { id } } });
/** What the flows of the task's answered calls reported (D22). */
export const getTaskResults = (id: string) => api().get('/api/task/{id}/results', { params: { path: { id } } });
export const getDiagnostics = (id: string) => api().get('/api/task/{id}/diagnostics', { params: { path: { id } } });
/** The task's contacts with their outcomes as a file; `status` picks them by outcome (all when absent). */
export const exportTask = (id: string, query: { format: ExportFormat; status?: T.OutcomeFilter }, redirect: Redirect = 'follow') =>
  api().file('/api/task/{id}/export', { params: { path: { id }, query }, redirect });
export const startTaskExportJob = (id: string, format: ExportFormat, status: T.OutcomeFilter) =>
  api().post('/api/task/{id}/exportJob', { params: { path: { id } }, body: { format, status } });
export const getExport = (exportId: string) => api().get('/api/export/{exportId}', { params: { path: { exportId } } });

// Settings
export const getSettings = () => api().get('/api/settings');
export const updateSettings = (body: T.UpdateSettings) => api().post('/api/settings/update', { body });

// Do-not-call list
export const listDnc = (query: PageQuery & { phoneNumber?: string }) => api().get('/api/dnc/list', { params: { query } });
export const addDnc = (body: T.AddDnc) => api().post('/api/dnc/add', { body });
export const deleteDnc = (phoneNumber: string) => api().post('/api/dnc/delete', { body: { phoneNumber } });
export function importDnc(file: File) {
  const form = new FormData();
  form.append('file', file, file.name);
  // The contract's `file` is binary, which the generator types as a string: the multipart body
  // itself goes as it is (openapi-fetch sends a FormData unchanged, with its own Content-Type).
  return api().post('/api/dnc/batchImport', { body: form as unknown as T.DncUpload });
}
