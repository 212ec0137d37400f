// @vitest-environment happy-dom
// Signing in: `#/signin?token=` is taken only in local mode (config.json says so), the header
// shows the tenant and the user the token names, and the pages follow its groups.
import { act, cleanup, render, screen } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from '../src/App';
import { getToken, setToken } from '../src/auth/session';
import { Layout } from '../src/components/Layout';
import { parseConfig, type AppConfig } from '../src/config';
import { fakeApi } from './support/fakeApi';
import { jwt } from './support/jwt';

const LOCAL = parseConfig({ apiBase: '', auth: { mode: 'local' } });
const COGNITO = parseConfig({ apiBase: '', auth: { mode: 'cognito', domain: 'https://x.auth.example', clientId: 'c1' } });
const NONE = parseConfig(null);
const TOKEN = jwt({ sub: 'dev-acme', tenant_id: 'acme', token_use: 'access' });

/** Lets effects, navigation and the promises they start settle. */
async function settle() {
  for (let i = 0; i < 5; i++) {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
  }
}

async function open(hash: string, config: AppConfig) {
  window.location.hash = hash;
  render(<App config={config} initialNotice={null} />);
  await settle();
}

const SETTINGS = { defaultCountry: 'US', callingHours: null, frequencyCap: null, updateTime: null, callerIds: [], contactFlows: [], queues: [] };

beforeEach(() => {
  sessionStorage.clear();
  fakeApi({
    'GET /api/dataSource/list': () => ({ total: 0, rows: [], nextToken: null }),
    'GET /api/settings': () => SETTINGS,
    'GET /api/dnc/list': () => ({ total: 1, rows: [{ phoneNumber: '+12025550101', e164: '+12025550101', createTime: '2030-01-01T00:00:00Z' }], nextToken: null }),
  });
});

afterEach(() => {
  cleanup();
  setToken(null);
  window.location.hash = '';
});

describe('#/signin?token=', () => {
  it('signs in on the local stack, takes the token out of the address bar and shows who', async () => {
    await open(`#/signin?token=${TOKEN}`, LOCAL);
    expect(getToken()).toBe(TOKEN);
    expect(window.location.hash).toBe('#/datasources');
    expect(window.location.href).not.toContain(TOKEN);
    const header = screen.getByRole('banner');
    expect(header.textContent).toContain('Tenant acme');
    expect(header.textContent).toContain('User dev-acme');
    expect(screen.getByRole('heading', { name: 'Data sources' })).toBeTruthy();
  });

  for (const [mode, config] of [
    ['cognito', COGNITO],
    ['none (no config.json)', NONE],
  ] as const) {
    it(`is refused in ${mode} mode: the token is dropped unused`, async () => {
      await open(`#/signin?token=${TOKEN}`, config);
      expect(getToken()).toBeNull();
      expect(window.location.hash).toBe('#/signin');
      expect(window.location.href).not.toContain(TOKEN);
      expect(screen.getByRole('alert').textContent).toBe(
        'A sign-in link with a token works only on the local stack. Sign in here instead.',
      );
      expect(screen.queryByText(/Tenant/)).toBeNull();
      expect(screen.queryByRole('textbox', { name: 'Development token' })).toBeNull();
    });
  }

  it('offers no sign-in at all without a config.json', async () => {
    await open('#/signin', NONE);
    expect(screen.getByText(/no way to sign in/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull();
  });
});

describe('header', () => {
  it('shows the tenant claim of config.json and the sub', async () => {
    setToken(jwt({ sub: 'u-7', 'custom:tenant': 'globex', tenant_id: 'not-this' }));
    await open('#/datasources', { ...COGNITO, tenantClaim: 'custom:tenant' });
    const header = screen.getByRole('banner');
    expect(header.textContent).toContain('Tenant globex');
    expect(header.textContent).toContain('User u-7');
  });

  it('says unknown for what the token does not name, and nothing when signed out', () => {
    render(
      <Layout route="tasks" signedIn={true} identity={{ tenant: 'acme', user: null, groups: [] }} onSignOut={() => {}}>
        <p>page</p>
      </Layout>,
    );
    expect(screen.getByRole('banner').textContent).toContain('Tenant acme · User unknown');
    cleanup();
    render(
      <Layout route="signin" signedIn={false} identity={{ tenant: 'acme', user: 'u', groups: [] }} onSignOut={() => {}}>
        <p>page</p>
      </Layout>,
    );
    expect(screen.getByRole('banner').textContent).not.toContain('acme');
  });
});

describe('the groups of the token', () => {
  const ONLY_ADMINS = /Only members of the group admins can/;

  it('let a member of admins change the settings and delete from the do-not-call list', async () => {
    setToken(jwt({ sub: 'ada', tenant_id: 'acme', 'cognito:groups': ['admins'] }));
    await open('#/settings', COGNITO);
    expect(screen.getByRole('button', { name: 'Save settings' })).toBeTruthy();
    expect(screen.queryByText(ONLY_ADMINS)).toBeNull();
    cleanup();
    await open('#/dnc', COGNITO);
    expect(screen.getByRole('button', { name: 'Delete +12025550101' })).toBeTruthy();
    expect(screen.queryByText(ONLY_ADMINS)).toBeNull();
  });

  for (const [name, claim] of [
    ['no group (the claim absent)', undefined],
    ['other groups', ['operators', 'sales,admins']],
    ['a string, not a list', 'admins'],
  ] as const) {
    it(`show a member in ${name} the settings read-only and no Delete`, async () => {
      setToken(jwt({ sub: 'bob', tenant_id: 'acme', ...(claim === undefined ? {} : { 'cognito:groups': claim }) }));
      await open('#/settings', COGNITO);
      expect(screen.getByText('Only members of the group admins can change these settings.')).toBeTruthy();
      expect(screen.queryByRole('button', { name: 'Save settings' })).toBeNull();
      expect((screen.getByLabelText('Default country') as HTMLInputElement).disabled).toBe(true);
      cleanup();
      await open('#/dnc', COGNITO);
      expect(screen.getByText('Only members of the group admins can delete numbers from the list.')).toBeTruthy();
      expect(screen.getByRole('rowheader', { name: '+12025550101' })).toBeTruthy();
      expect(screen.queryByRole('button', { name: /^Delete/ })).toBeNull();
      expect(screen.getByRole('button', { name: 'Add to list' })).toBeTruthy();
    });
  }
});
