// @vitest-environment happy-dom
// The do-not-call page (DncPage): a member of admins may delete a listed number; any other member
// is offered no Delete, told who may, and may still add numbers.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Dnc } from '../src/api/types';
import type { Identity } from '../src/auth/claims';
import { DncPage } from '../src/pages/Dnc';
import { envelope, fakeApi, type Sent } from './support/fakeApi';

const ADMIN: Identity = { tenant: 'acme', user: 'ada', groups: ['admins'] };
const MEMBER: Identity = { tenant: 'acme', user: 'bob', groups: ['operators'] };
const ONLY_ADMINS = 'Only members of the group admins can delete numbers from the list.';

const LISTED: Dnc[] = [
  { phoneNumber: '+12025550101', e164: '+12025550101', country: 'US', reason: 'asked', createTime: '2030-01-01T00:00:00Z' },
  { phoneNumber: '02071838750', e164: '+442071838750', country: 'GB', reason: null, createTime: '2030-01-02T00:00:00Z' },
];

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** Answers the page's "Remove … from the do-not-call list?" with OK. */
const confirmRemoval = () => vi.stubGlobal('confirm', vi.fn(() => true));

/** The page over a fake API listing `LISTED`, signed in as `who`; `remove` answers POST /api/dnc/delete. */
async function open(who: Identity | null, remove: (sent: Sent) => unknown = () => null) {
  const sent = fakeApi({
    'GET /api/dnc/list': () => ({ total: LISTED.length, rows: LISTED, nextToken: null }),
    'POST /api/dnc/add': (one) => ({ ...(one.body as Dnc), createTime: '2030-01-03T00:00:00Z' }),
    'POST /api/dnc/delete': remove,
  });
  render(<DncPage identity={who} />);
  await screen.findByRole('rowheader', { name: LISTED[0].phoneNumber });
  return sent;
}

const table = () => screen.getByRole('table', { name: 'Listed numbers' });
const headers = () => within(table()).getAllByRole('columnheader').map((th) => th.textContent);
const deletes = (sent: Sent[]) => sent.filter((s) => s.path === '/api/dnc/delete');

describe('do-not-call list for an administrator', () => {
  it('offers Delete on each number, and deletes by its E.164 form', async () => {
    const sent = await open(ADMIN);
    expect(headers()).toEqual(['Phone number', 'E.164', 'Country', 'Reason', 'Listed', 'Actions']);
    expect(screen.queryByText(ONLY_ADMINS)).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete +12025550101' })).toBeTruthy();
    confirmRemoval();
    fireEvent.click(screen.getByRole('button', { name: 'Delete 02071838750' }));
    expect(await screen.findByRole('status')).toHaveProperty('textContent', '02071838750 removed from the list.');
    expect(deletes(sent).map((s) => s.body)).toEqual([{ phoneNumber: '+442071838750' }]);
  });

  it('shows the message of a 403 when the token no longer names an administrator', async () => {
    await open(ADMIN, () => envelope(403, 403, 'only members of the group admins may make this request'));
    confirmRemoval();
    fireEvent.click(screen.getByRole('button', { name: 'Delete +12025550101' }));
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'only members of the group admins may make this request');
    expect(screen.queryByText(/removed from the list/)).toBeNull();
  });
});

describe('do-not-call list for a member who is not in admins', () => {
  it.each([
    ['operators only', MEMBER],
    ['no group', { ...MEMBER, groups: [] }],
    ['an unreadable token', null],
  ])('(%s) lists the numbers with no Delete and says who may delete', async (_, who) => {
    await open(who);
    expect(headers()).toEqual(['Phone number', 'E.164', 'Country', 'Reason', 'Listed']);
    expect(screen.queryAllByRole('button', { name: /^Delete/ })).toEqual([]);
    const note = screen.getByText(ONLY_ADMINS);
    expect(table().getAttribute('aria-describedby')).toBe(note.id);
  });

  it('still adds a number', async () => {
    const sent = await open(MEMBER);
    fireEvent.input(screen.getByLabelText('Phone number'), { target: { value: '+1 202 555 0199' } });
    fireEvent.input(screen.getByLabelText('Reason'), { target: { value: 'asked twice' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add to list' }));
    expect(await screen.findByRole('status')).toHaveProperty('textContent', '+1 202 555 0199 will never be called.');
    expect(sent.filter((s) => s.path === '/api/dnc/add').map((s) => s.body)).toEqual([{ phoneNumber: '+1 202 555 0199', reason: 'asked twice' }]);
    // Importing stays offered too.
    await waitFor(() => expect(screen.getByLabelText('Import numbers from a file')).toHaveProperty('disabled', false));
  });
});
