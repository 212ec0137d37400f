// Typed calls, one per route the console uses. They all go through the one client (client.ts).
import type { ApiClient, Query } from './client';
import type * as T from './types';

let client: ApiClient | null = null;

export function setClient(c: ApiClient): void {
  client = c;
}

export function api(): ApiClient {
  if (!client) throw new Error('API client not configured');
  return client;
}

const get = <R>(path: string, query?: Query) => api().request<R>('GET', path, { query });
const post = <R>(path: string, body: unknown = {}) => api().request<R>('POST', path, { body });
const enc = encodeURIComponent;

export interface PageQuery {
  pageNum: number;
  pageSize: number;
  /** The previous page's `nextToken` (D5): the page after it; `pageNum` is then ignored. */
  nextToken?: string;
}

// Data sources
export const listDataSources = (q: PageQuery & { dataSourceName?: string }) =>
  get<T.Page<T.DataSource>>('/api/dataSource/list', { ...q });
export const getDataSource = (id: string) => get<T.DataSource>(`/api/dataSource/detail/${enc(id)}`);
export const addDataSource = (body: T.AddDataSource) => post<T.DataSource>('/api/dataSource/add', body);
export const updateDataSource = (body: T.UpdateDataSource) => post<T.DataSource>('/api/dataSource/update', body);
export const deleteDataSource = (id: string) => post<null>('/api/dataSource/delete', { id });

// Contacts
export const listContacts = (id: string, q: PageQuery & { phoneNumber?: string }) =>
  get<T.Page<T.Contact>>(`/api/dataSource/${enc(id)}/contacts`, { ...q });
export const addContact = (id: string, body: T.ContactInput) =>
  post<T.Contact>(`/api/dataSource/${enc(id)}/contact/add`, body);
export const updateContact = (id: string, body: T.ContactUpdate) =>
  post<T.Contact>(`/api/dataSource/${enc(id)}/contact/update`, body);
export const deleteContact = (id: string, contactId: string) =>
  post<null>(`/api/dataSource/${enc(id)}/contact/delete`, { contactId });
export const importUrl = (id: string, fileName: string, fileSize: number) =>
  post<T.UploadTicket>(`/api/dataSource/${enc(id)}/contact/importUrl`, { fileName, fileSize });
export const getImport = (id: string, importId: string) =>
  get<T.ImportView>(`/api/dataSource/${enc(id)}/contact/import/${enc(importId)}`);
export const dataSourceExportPath = (id: string) => `/api/dataSource/${enc(id)}/contact/batchExport`;
export const startDataSourceExportJob = (id: string, format: 'csv' | 'excel') =>
  post<T.JobStarted>(`/api/dataSource/${enc(id)}/contact/exportJob`, { format });

// Tasks
export const listTasks = (q: PageQuery & { taskName?: string; status?: number | null }) =>
  get<T.Page<T.TaskRow>>('/api/task/list', { ...q });
export const getTask = (id: string) => get<T.TaskView>(`/api/task/detail/${enc(id)}`);
export const addTask = (body: T.AddTask) => post<T.TaskView>('/api/task/add', body);
export const updateTask = (body: T.UpdateTask) => post<T.TaskView>('/api/task/update', body);
export const taskAction = (action: 'publish' | 'pause' | 'resume' | 'close' | 'delete', id: string) =>
  post<T.StateChange | null>(`/api/task/${action}`, { id });
export const stopTask = (id: string, reason?: string) =>
  post<T.StateChange>('/api/task/stop', reason ? { id, reason } : { id });
export const recallTask = (id: string, contactIds?: string[]) =>
  post<T.Recalled>(`/api/task/${enc(id)}/recall`, contactIds ? { contactIds } : {});
export const getTaskStat = (id: string) => get<T.TaskStat>(`/api/task/${enc(id)}/stat`);
export const getDiagnostics = (id: string) => get<T.Diagnostics>(`/api/task/${enc(id)}/diagnostics`);
export const taskExportPath = (id: string) => `/api/task/${enc(id)}/export`;
export const startTaskExportJob = (id: string, format: 'csv' | 'excel', status: number) =>
  post<T.JobStarted>(`/api/task/${enc(id)}/exportJob`, { format, status });
export const getExport = (exportId: string) => get<T.ExportView>(`/api/export/${enc(exportId)}`);

// Settings
export const getSettings = () => get<T.Settings>('/api/settings');
export const updateSettings = (body: T.UpdateSettings) => post<T.Settings>('/api/settings/update', body);

// Do-not-call list
export const listDnc = (q: PageQuery & { phoneNumber?: string }) => get<T.Page<T.Dnc>>('/api/dnc/list', { ...q });
export const addDnc = (body: T.AddDnc) => post<T.Dnc>('/api/dnc/add', body);
export const deleteDnc = (phoneNumber: string) => post<null>('/api/dnc/delete', { phoneNumber });
export function importDnc(file: File) {
  const form = new FormData();
  form.append('file', file, file.name);
  return api().request<T.ImportReport>('POST', '/api/dnc/batchImport', { form });
}
