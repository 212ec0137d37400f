import { describe, expect, it } from 'vitest';
import { describeFilter, filterFromRows, localInput, rfc3339, rowsFromFilter } from '../src/state/schedule';

describe('a schedule and a callback time (D31)', () => {
  it('goes out as RFC 3339 with the browser zone offset, and comes back as the same local time', () => {
    const sent = rfc3339('2026-12-01T15:30');
    expect(sent).toMatch(/^2026-12-01T15:30:00[+-]\d{2}:\d{2}$/);
    expect(new Date(sent!).getHours()).toBe(15);
    expect(localInput(sent)).toBe('2026-12-01T15:30');
    expect(localInput(new Date(sent!).toISOString())).toBe('2026-12-01T15:30');
  });

  it('is nothing when empty or unreadable', () => {
    expect(rfc3339('')).toBeNull();
    expect(rfc3339('tomorrow')).toBeNull();
    expect(localInput(null)).toBe('');
    expect(localInput('not a time')).toBe('');
  });
});

describe('a filter (D31)', () => {
  it('goes out as conditions, lists split at commas, exists without a value', () => {
    const rows = [
      { field: 'region', op: 'in' as const, value: 'north, east,' },
      { field: ' phoneNumber ', op: 'prefix' as const, value: '212' },
      { field: 'vip', op: 'exists' as const, value: 'ignored' },
    ];
    expect(filterFromRows(rows)).toEqual({
      conditions: [
        { field: 'region', op: 'in', value: ['north', 'east'] },
        { field: 'phoneNumber', op: 'prefix', value: '212' },
        { field: 'vip', op: 'exists' },
      ],
    });
  });

  it('names the first row that cannot be a condition', () => {
    expect(filterFromRows([{ field: '', op: 'eq', value: 'x' }])).toEqual({
      problem: 'Condition 1: name the field (phoneNumber or a contact field).',
    });
    expect(filterFromRows([{ field: 'a', op: 'exists', value: '' }, { field: 'b', op: 'eq', value: ' ' }])).toEqual({
      problem: 'Condition 2: give a value.',
    });
    expect(filterFromRows([{ field: 'a', op: 'in', value: ' , ' }])).toEqual({
      problem: 'Condition 1: list 1 to 100 values, separated by commas.',
    });
    const eleven = Array.from({ length: 11 }, () => ({ field: 'a', op: 'exists' as const, value: '' }));
    expect(filterFromRows(eleven)).toEqual({ problem: 'A filter holds at most 10 conditions.' });
  });

  it('reads back as the form holds it, and in words', () => {
    const conditions = [
      { field: 'region', op: 'in' as const, value: ['north', 'east'] },
      { field: 'vip', op: 'exists' as const },
    ];
    expect(rowsFromFilter(conditions)).toEqual([
      { field: 'region', op: 'in', value: 'north, east' },
      { field: 'vip', op: 'exists', value: '' },
    ]);
    expect(describeFilter(conditions)).toBe('region is one of north, east and vip is set');
    expect(describeFilter([])).toBe('Every contact');
  });
});
