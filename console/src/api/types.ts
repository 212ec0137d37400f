// Names for the generated OpenAPI types (src/api/schema.ts, `npm run gen:api`), and the values
// of the contract's enums as its Rust side spells them: an integer-coded enum as a TypeScript enum
// named by its `x-enum-varnames` (TaskStatus.DRAFT is 0, TaskStatus[0] is 'DRAFT'), a string enum
// as the array of its values. The console writes none of them again.
import type { components } from './schema';

export { ContactStatus, OutcomeFilter, TaskStatus } from './schema';
export { dialingModeValues, exportFormatValues, retryableReasonValues, voicemailValues, windowZoneValues } from './schema';

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
/** A reason a retry rule may name (D18): the ones Rust's `Reason::retryable` admits. */
export type RetryableReason = S['RetryableReason'];
export type ExportFormat = S['ExportFormat'];
export type WindowZone = S['WindowZone'];
export type TaskStat = S['TaskStat'];
/** The task's whole campaign (D31): its outcomes by interval and its changes of state. */
export type TaskHistory = S['TaskHistory'];
export type HistoryInterval = S['HistoryInterval'];
export type HistoryState = S['HistoryState'];
export type Diagnostics = S['DiagnosticsView'];
export type Blocked = S['Blocked'];
export type Recalled = S['Recalled'];
export type StateChange = S['StateChange'];
export type Published = S['Published'];
export type Voicemail = S['Voicemail'];
export type Settings = S['SettingsView'];
export type UpdateSettings = S['UpdateSettings'];
export type ContactFlow = S['ContactFlow'];
export type AgentQueue = S['AgentQueue'];
/** How a task's answered calls meet people (D30): the flow alone, or a queue's agents. */
export type DialingMode = S['DialingMode'];
/** The agents of an agent-paced task's queue, as the tick last read them (D30). */
export type Agents = S['AgentsView'];
export type TaskResults = S['TaskResults'];
export type ResultAttribute = S['ResultAttribute'];
export type Dnc = S['DncView'];
export type AddDnc = S['AddDnc'];
export type DncUpload = S['DncUpload'];
export type CallbackView = S['CallbackView'];
export type CallbackStatus = S['CallbackStatus'];
export type FilterCondition = S['FilterCondition'];
export type FilterOp = S['FilterOp'];
