// Names for the generated OpenAPI types (src/api/schema.d.ts, `npm run gen:api`).
import type { components } from './schema';

type S = components['schemas'];

export type DataSource = S['DataSourceView'];
export type AddDataSource = S['AddDataSource'];
export type UpdateDataSource = S['UpdateDataSource'];
export type Contact = S['ContactView'];
export type ContactInput = S['ContactInput'];
export type ContactUpdate = S['ContactUpdate'];
export type ImportReport = S['ImportReport'];
export type ImportView = S['ImportView'];
export type ImportStatus = S['ImportStatus'];
export type UploadTicket = S['UploadTicketView'];
export type PostedImport = S['PostedImport'];
export type JobStarted = S['JobStarted'];
export type ExportView = S['ExportView'];
export type TaskRow = S['TaskRow'];
export type TaskView = S['TaskView'];
export type AddTask = S['AddTask'];
export type UpdateTask = S['UpdateTask'];
export type RetryRule = S['RetryRule'];
export type Reason = S['Reason'];
export type WindowZone = S['WindowZone'];
export type TaskStat = S['TaskStat'];
export type Diagnostics = S['DiagnosticsView'];
export type Blocked = S['Blocked'];
export type Recalled = S['Recalled'];
export type StateChange = S['StateChange'];
export type Published = S['Published'];
export type Voicemail = S['Voicemail'];
// D22's settings fields and a task's results, as the contract will name them (SettingsView,
// UpdateSettings, ContactFlow, TaskResults): written here until openapi.yaml has them.
export interface ContactFlow {
  id: string;
  name: string;
}
export type Settings = S['SettingsView'] & {
  callerIds?: string[];
  contactFlows?: ContactFlow[];
  defaultCallerId?: string | null;
  defaultContactFlowId?: string | null;
};
export type UpdateSettings = S['UpdateSettings'] & {
  defaultCallerId?: string | null;
  defaultContactFlowId?: string | null;
};
export interface ResultValue {
  value: string;
  count: number;
}
export interface ResultAttribute {
  name: string;
  values: ResultValue[];
  otherCount: number;
  missingCount: number;
}
export interface TaskResults {
  attributes: ResultAttribute[];
}
export type Dnc = S['DncView'];
export type AddDnc = S['AddDnc'];
export type DncUpload = S['DncUpload'];
