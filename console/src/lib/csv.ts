// A CSV reader for the service's own exports (D8): RFC 4180 quoting, CRLF or LF, a leading BOM.

/** The rows of `text`, each a list of its fields; an empty last line is dropped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (quoted) {
      if (c === '"' && input[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && input[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += c;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The rows of `text` as records keyed by the title row. */
export function csvRecords(text: string): Record<string, string>[] {
  const [titles, ...rows] = parseCsv(text);
  if (!titles) return [];
  return rows.map((row) => Object.fromEntries(titles.map((title, i) => [title, row[i] ?? ''])));
}
