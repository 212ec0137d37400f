import { describe, expect, it } from 'vitest';
import { contactStatusName, duration, fileNameFromDisposition, humanize, isFinalStatus, percent, statusName } from '../src/format';

describe('format', () => {
  it('shows fractions as percentages', () => {
    expect(percent(0)).toBe('0%');
    expect(percent(0.5)).toBe('50%');
    expect(percent(0.1234)).toBe('12.3%');
    expect(percent(1)).toBe('100%');
    expect(percent(2)).toBe('200%');
    expect(percent(0.66667, 2)).toBe('66.67%');
    expect(percent(null)).toBe('—');
    expect(percent(Number.NaN)).toBe('—');
  });

  it('shows durations in seconds as words', () => {
    expect(duration(0)).toBe('0 s');
    expect(duration(59)).toBe('59 s');
    expect(duration(60)).toBe('1 min');
    expect(duration(298)).toBe('4 min 58 s');
    expect(duration(3661)).toBe('1 h 1 min 1 s');
    expect(duration(90000)).toBe('1 d 1 h');
    expect(duration(37.4)).toBe('37 s');
    expect(duration(undefined)).toBe('—');
  });

  it('names statuses', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map(statusName)).toEqual(['DRAFT', 'RUNNING', 'PAUSED', 'STOPPED', 'COMPLETED', 'FAILED', 'CLOSED']);
    expect(statusName(9)).toBe('UNKNOWN (9)');
    expect([0, 1, 2, 3, 4, 5, 6].filter(isFinalStatus)).toEqual([3, 4, 5, 6]);
    expect(contactStatusName(3)).toBe('No answer');
    expect(humanize('NO_ANSWER')).toBe('No answer');
  });

  it('reads file names from Content-Disposition', () => {
    expect(fileNameFromDisposition('attachment; filename="contacts_20260101.csv"')).toBe('contacts_20260101.csv');
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''t%20x.xlsx")).toBe('t x.xlsx');
    expect(fileNameFromDisposition(null)).toBeNull();
  });
});
