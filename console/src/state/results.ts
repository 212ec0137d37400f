// One result attribute's values among a task's answered contacts (D22) as rows to draw and list:
// its values, then the other values and the contacts that did not set it, each with its share.
import type { ResultAttribute } from '../api/types';

export interface ResultRow {
  label: string;
  count: number;
  /** Of every answered contact (0-1); 0 when there is none. */
  share: number;
  /** The "other values" and "not set" rows. */
  aside?: boolean;
}

export function resultRows(attribute: ResultAttribute): { rows: ResultRow[]; total: number } {
  const counted: Omit<ResultRow, 'share'>[] = attribute.values.map((v) => ({ label: v.value, count: v.count }));
  if (attribute.otherCount > 0) counted.push({ label: 'Other values', count: attribute.otherCount, aside: true });
  if (attribute.missingCount > 0) counted.push({ label: 'Not set', count: attribute.missingCount, aside: true });
  const total = counted.reduce((sum, row) => sum + row.count, 0);
  return { rows: counted.map((row) => ({ ...row, share: total ? row.count / total : 0 })), total };
}
