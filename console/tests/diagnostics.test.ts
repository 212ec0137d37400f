import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BLOCKED_SENTENCES, blockedSentence, partitionSentence, skipSentences } from '../src/state/diagnostics';

/** The `enum` of a component schema, read from openapi.yaml without a YAML library. */
function schemaEnum(name: string): string[] {
  const text = readFileSync(fileURLToPath(new URL('../../openapi.yaml', import.meta.url)), 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === `    ${name}:`);
  expect(start, `schema ${name} in openapi.yaml`).toBeGreaterThan(-1);
  const values: string[] = [];
  let inEnum = false;
  for (const line of lines.slice(start + 1)) {
    if (/^ {4}\S/.test(line) || /^\S/.test(line)) break; // next schema
    if (/^ {6}enum:/.test(line)) {
      inEnum = true;
      continue;
    }
    if (inEnum) {
      const m = /^ {6}- (.+)$/.exec(line);
      if (!m) break;
      values.push(m[1].trim().replace(/^['"]|['"]$/g, ''));
    }
  }
  return values;
}

describe('diagnostics wording', () => {
  const blocked = schemaEnum('Blocked');

  it('reads the Blocked enum from openapi.yaml', () => {
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked).toContain('NOT_RUNNING');
  });

  it('has a sentence for every blockedBy value and no other', () => {
    for (const value of blocked) {
      const sentence = blockedSentence(value as keyof typeof BLOCKED_SENTENCES);
      expect(sentence, value).toMatch(/^[A-Z].*\.$/);
      expect(sentence).not.toContain(value);
    }
    expect(Object.keys(BLOCKED_SENTENCES).sort()).toEqual([...blocked].sort());
    expect(new Set(Object.values(BLOCKED_SENTENCES)).size).toBe(blocked.length);
  });

  it('says it is dialling when nothing blocks it', () => {
    expect(blockedSentence(null)).toBe('It is dialling now.');
    expect(blockedSentence(undefined)).toBe('It is dialling now.');
  });

  it('names the state when the task is not running', () => {
    expect(blockedSentence('NOT_RUNNING', 2)).toBe('It is not running (it is PAUSED): only a RUNNING task dials.');
  });

  it('has words for every skip in openapi.yaml', () => {
    const text = readFileSync(fileURLToPath(new URL('../../openapi.yaml', import.meta.url)), 'utf8');
    const block = text.slice(text.indexOf('    SkipCounts:'), text.indexOf('    StateChange:'));
    const skips = [...block.matchAll(/^ {8}([A-Z_]+):$/gm)].map((m) => m[1]);
    expect(skips.length).toBe(8);
    const counts = Object.fromEntries(skips.map((k) => [k, 2])) as Parameters<typeof skipSentences>[0];
    expect(skipSentences(counts)).toHaveLength(skips.length);
  });

  it('describes the partition and the skips', () => {
    expect(partitionSentence({ total: 10, notDialled: 4, waiting: 3, inFlight: 1, final: 2 })).toBe(
      'Of 10 contacts: 4 not dialled yet, 3 waiting, 1 in flight, 2 final.',
    );
    expect(skipSentences({ DNC: 1, INVALID_NUMBER: 0, OUTSIDE_WINDOW: 3, CALLING_HOURS: 0, FREQUENCY_CAP: 0, NO_COMMON_WINDOW: 0, ATTRIBUTES_TOO_LARGE: 0, FILTERED: 0 })).toEqual([
      '1 contact skipped on the do-not-call list.',
      '3 contacts skipped outside their calling window.',
    ]);
  });
});
