import { describe, expect, it } from 'vitest';
import { csvRecords, parseCsv } from '../src/lib/csv';

describe('parseCsv', () => {
  it('reads quoted fields with commas, quotes and line breaks, CRLF and a BOM', () => {
    const text = '\uFEFFid,phoneNumber,note\r\n1,+12025550101,"says ""hi"", twice"\r\n2,+12025550102,"two\nlines"\r\n';
    expect(parseCsv(text)).toEqual([
      ['id', 'phoneNumber', 'note'],
      ['1', '+12025550101', 'says "hi", twice'],
      ['2', '+12025550102', 'two\nlines'],
    ]);
  });

  it('keeps empty fields and a last line without a break', () => {
    expect(parseCsv('a,,c\n,b,')).toEqual([
      ['a', '', 'c'],
      ['', 'b', ''],
    ]);
  });
});

describe('csvRecords', () => {
  it('keys each row by the title row, missing fields empty', () => {
    expect(csvRecords('id,lastReason\nX,BUSY\nY\n')).toEqual([
      { id: 'X', lastReason: 'BUSY' },
      { id: 'Y', lastReason: '' },
    ]);
    expect(csvRecords('')).toEqual([]);
  });
});
