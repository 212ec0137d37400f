// @vitest-environment happy-dom
// The settings form (SettingsPage): what it shows, what it refuses and what it sends; read-only
// for a member who is not in the group admins.
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import type { Settings } from '../src/api/types';
import type { Identity } from '../src/auth/claims';
import { SettingsPage } from '../src/pages/Settings';
import { envelope, fakeApi, type Sent } from './support/fakeApi';

const SAVED: Settings = {
  defaultCountry: 'US',
  callingHours: { start: '08:00', end: '21:00' },
  frequencyCap: { maxCalls: 3, periodHours: 24 },
  updateTime: '2030-01-02T03:04:05Z',
  callerIds: ['+12125550100', '+442071838750'],
  contactFlows: [
    { id: 'flow-remind', name: 'Order reminder' },
    { id: 'flow-survey', name: 'Survey' },
  ],
  queues: [{ id: 'q-renewals', name: 'Renewals team' }],
  defaultCallerId: '+12125550100',
  defaultContactFlowId: null,
};

const ADMIN: Identity = { tenant: 'acme', user: 'ada', groups: ['admins'] };
const MEMBER: Identity = { tenant: 'acme', user: 'bob', groups: [] };
const ONLY_ADMINS = 'Only members of the group admins can change these settings.';

afterEach(cleanup);

/**
 * The page over a fake API holding `settings`, signed in as `who` (an administrator unless
 * given); `update` answers POST /api/settings/update.
 */
async function open(settings: Settings, update?: (sent: Sent) => unknown, who: Identity | null = ADMIN) {
  let current = settings;
  const sent = fakeApi({
    'GET /api/settings': () => current,
    'POST /api/settings/update': (one) => {
      if (update) return update(one);
      current = { ...current, ...(one.body as Settings), updateTime: '2030-02-03T04:05:06Z' };
      return current;
    },
  });
  render(<SettingsPage identity={who} />);
  await screen.findByRole('form', { name: 'Settings' });
  return sent;
}

const field = (label: string) => screen.getByLabelText(label) as HTMLInputElement;
const type = (label: string, value: string) => fireEvent.input(field(label), { target: { value } });
const save = () => fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
const updates = (sent: Sent[]) => sent.filter((s) => s.path === '/api/settings/update');

describe('settings form', () => {
  it('shows the saved settings in labelled fields', async () => {
    await open(SAVED);
    expect(screen.getByRole('heading', { level: 1, name: 'Settings' })).toBeTruthy();
    expect(field('Default country').value).toBe('US');
    expect(field('Default country').maxLength).toBe(2);
    expect(field('Calling hours start').value).toBe('08:00');
    expect(field('Calling hours end').value).toBe('21:00');
    expect(field('Max calls').value).toBe('3');
    expect(field('Period (hours)').value).toBe('24');
    expect(screen.getByText('Last changed 2030-01-02T03:04:05Z.')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    // An administrator may change them.
    expect(field('Default country').disabled).toBe(false);
    expect(screen.queryByText(ONLY_ADMINS)).toBeNull();
  });

  it('shows empty fields for settings never set', async () => {
    await open({ defaultCountry: null, callingHours: null, frequencyCap: null, updateTime: null, callerIds: [], contactFlows: [], queues: [] });
    for (const label of ['Default country', 'Calling hours start', 'Calling hours end', 'Max calls', 'Period (hours)']) {
      expect(field(label).value).toBe('');
    }
    expect(screen.queryByText(/Last changed/)).toBeNull();
  });

  it('sends only the changed field, upper-cased, then says it is saved', async () => {
    const sent = await open(SAVED);
    type('Default country', 'gb');
    save();
    expect(await screen.findByRole('status')).toHaveProperty('textContent', 'Settings saved.');
    expect(updates(sent).map((s) => s.body)).toEqual([{ defaultCountry: 'GB' }]);
    // Saved, it reads the settings again.
    expect(sent.filter((s) => s.method === 'GET' && s.path === '/api/settings')).toHaveLength(2);
    expect(screen.getByText('Last changed 2030-02-03T04:05:06Z.')).toBeTruthy();
  });

  it('sends null for a group left empty, and both values of a changed group', async () => {
    const sent = await open(SAVED);
    type('Calling hours start', '');
    type('Calling hours end', '');
    type('Max calls', '5');
    save();
    await screen.findByText('Settings saved.');
    expect(updates(sent).map((s) => s.body)).toEqual([{ callingHours: null, frequencyCap: { maxCalls: 5, periodHours: 24 } }]);
  });

  it('sends nothing when nothing changed', async () => {
    const sent = await open(SAVED);
    save();
    expect(await screen.findByRole('status')).toHaveProperty('textContent', 'Nothing changed.');
    expect(updates(sent)).toEqual([]);
  });

  it.each([
    ['Default country', 'U1', 'Default country must be two letters (ISO 3166 alpha-2), e.g. US.'],
    ['Calling hours end', '', 'Give both a start and an end for the calling hours, or neither.'],
    ['Period (hours)', '', 'Give both the maximum calls and the period of the frequency cap, or neither.'],
  ])('refuses %s = %j with a message and sends nothing', async (label, value, message) => {
    const sent = await open(SAVED);
    type(label, value);
    save();
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', message);
    expect(updates(sent)).toEqual([]);
    expect(screen.queryByRole('status')).toBeNull();
  });

  it('leaves a number outside its bounds to the browser, which does not submit it', async () => {
    const sent = await open(SAVED);
    type('Max calls', '500');
    save();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(field('Max calls').validity.rangeOverflow).toBe(true);
    expect(updates(sent)).toEqual([]);
  });

  it('shows the message of a refusal from the API', async () => {
    await open(SAVED, () => envelope(400, 400, 'defaultCountry ZZ is not a country'));
    type('Default country', 'ZZ');
    save();
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'defaultCountry ZZ is not a country');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save settings' })).toHaveProperty('disabled', false));
    expect(screen.queryByText('Settings saved.')).toBeNull();
  });

  it('shows the message of a 403 when the token no longer names an administrator', async () => {
    await open(SAVED, () => envelope(403, 403, 'only members of the group admins may make this request'));
    type('Default country', 'GB');
    save();
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'only members of the group admins may make this request');
    expect(screen.queryByText('Settings saved.')).toBeNull();
  });
});

const select = (label: string) => screen.getByRole('combobox', { name: label }) as HTMLSelectElement;
const choicesOf = (label: string) => [...select(label).options].map((o) => [o.value, o.textContent]);
const listed = (name: RegExp) => screen.getByRole('list', { name }).querySelectorAll('li');

describe('settings: caller IDs and contact flows (D22)', () => {
  it('lists what the operator assigned, read-only, and the defaults to choose among them', async () => {
    await open(SAVED);
    const group = screen.getByRole('group', { name: 'Caller IDs and contact flows' });
    expect(group.textContent).toContain('The operator of the service assigns your organisation’s caller IDs and contact flows');
    expect([...listed(/^Caller IDs \(2\)$/)].map((li) => li.textContent)).toEqual(['+12125550100', '+442071838750']);
    expect([...listed(/^Contact flows \(2\)$/)].map((li) => li.textContent)).toEqual(['Order reminder flow-remind', 'Survey flow-survey']);
    // Nothing to edit in the lists themselves: the only controls are the two defaults.
    expect(group.querySelectorAll('input')).toHaveLength(0);
    expect(choicesOf('Default caller ID')).toEqual([
      ['', 'None'],
      ['+12125550100', '+12125550100'],
      ['+442071838750', '+442071838750'],
    ]);
    expect(select('Default caller ID').value).toBe('+12125550100');
    expect(choicesOf('Default contact flow')).toEqual([
      ['', 'None'],
      ['flow-remind', 'Order reminder'],
      ['flow-survey', 'Survey'],
    ]);
    expect(select('Default contact flow').value).toBe('');
  });

  it('lists the agent queues the operator assigned, read-only (D30)', async () => {
    await open(SAVED);
    expect([...listed(/^Agent queues \(1\)$/)].map((li) => li.textContent)).toEqual(['Renewals team q-renewals']);
  });

  it('says when nothing is assigned yet', async () => {
    await open({ ...SAVED, callerIds: [], contactFlows: [], queues: [], defaultCallerId: null });
    expect(screen.getByText('No caller ID is assigned yet.')).toBeTruthy();
    expect(screen.getByText('No contact flow is assigned yet.')).toBeTruthy();
    expect(screen.getByText('No agent queue is assigned yet.')).toBeTruthy();
    expect(choicesOf('Default caller ID')).toEqual([['', 'None']]);
    expect(choicesOf('Default contact flow')).toEqual([['', 'None']]);
  });

  it('sends the defaults chosen', async () => {
    const sent = await open(SAVED);
    fireEvent.change(select('Default caller ID'), { target: { value: '+442071838750' } });
    fireEvent.change(select('Default contact flow'), { target: { value: 'flow-survey' } });
    save();
    await screen.findByText('Settings saved.');
    expect(updates(sent).map((s) => s.body)).toEqual([{ defaultCallerId: '+442071838750', defaultContactFlowId: 'flow-survey' }]);
    expect(select('Default contact flow').value).toBe('flow-survey');
  });

  it('sends null for a default set back to none, and nothing for one left alone', async () => {
    const sent = await open({ ...SAVED, defaultContactFlowId: 'flow-remind' });
    fireEvent.change(select('Default caller ID'), { target: { value: '' } });
    save();
    await screen.findByText('Settings saved.');
    expect(updates(sent).map((s) => s.body)).toEqual([{ defaultCallerId: null }]);
  });
});

describe('settings for a member who is not in admins', () => {
  const controls = () => [...screen.getByRole('form', { name: 'Settings' }).querySelectorAll('input, select')] as (HTMLInputElement | HTMLSelectElement)[];

  it.each([
    ['no group', MEMBER],
    ['other groups', { ...MEMBER, groups: ['operators', 'sales,admins'] }],
    ['an unreadable token', null],
  ])('(%s) shows the saved settings read-only, says who may change them, and offers no Save', async (_, who) => {
    const sent = await open(SAVED, undefined, who);
    expect(field('Default country').value).toBe('US');
    expect(select('Default caller ID').value).toBe('+12125550100');
    expect(controls().map((c) => c.id)).toEqual([
      'settings-defaultCountry',
      'settings-defaultCallerId',
      'settings-defaultContactFlowId',
      'settings-hoursStart',
      'settings-hoursEnd',
      'settings-maxCalls',
      'settings-periodHours',
    ]);
    for (const control of controls()) expect(control.disabled, control.id).toBe(true);
    const note = screen.getByText(ONLY_ADMINS);
    expect(screen.getByRole('form', { name: 'Settings' }).getAttribute('aria-describedby')).toBe(note.id);
    expect(screen.queryByRole('button', { name: 'Save settings' })).toBeNull();
    expect(screen.queryByText(/Leave a field empty/)).toBeNull();
    // Submitting anyway (Enter) sends nothing.
    fireEvent.submit(screen.getByRole('form', { name: 'Settings' }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(updates(sent)).toEqual([]);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
