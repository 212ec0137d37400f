// The console's end-to-end test: a whole campaign through the UI against the real local API
// (target/debug/local-api on its own stack and port, against moto on MOTO_ENDPOINT), in
// Debian's headless chromium. Sign in with the development token, create a data source, import
// a CSV of five contacts and one bad row, have the operator assign the tenant caller IDs and
// flows and choose a default flow among them, create a task over it that calls with local
// presence through a flow of its own, sending two contact fields and recording one result,
// publish it and watch it complete, read its diagnostics and results, recall a chosen failed
// contact and then the other failed one and watch it complete each time (the chart of its
// history counting every call), pause and resume it while a callback keeps it running (the chart
// shades the pause), check the calls placed and the results, export its outcomes as CSV, sign in as a member who is not in the group
// admins (the settings read-only, no Delete on the do-not-call list) and back as the
// administrator (who changes them), then check the domain events the bus delivered. Each main page is
// screenshot (docs/console/*.png: written when missing or with UPDATE_SCREENSHOTS=1) and checked
// with axe-core (serious or critical violations fail).
//   console/node_modules/.bin/tsx --test console/e2e/campaign.e2e.ts   (scripts/console.sh test runs it)
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ApiError } from '../src/api/client.ts';
import { csvRecords } from '../src/lib/csv.ts';
import { eventsOf, type BusEvent } from './clients.ts';
import { devToken, freshContext, startLocalApi, until, type LocalApi } from './lib.ts';
import { accessibilityViolations, screenshot } from './page.ts';

const WAIT = 60_000; // the longest wait: for the dialling (a few seconds when all is well)
const UI_WAIT = 15_000; // for an element of the page to show
const run = Date.now().toString(36);
const DATA_SOURCE = `E2E list ${run}`;
const TASK = `E2E campaign ${run}`;

// Five good contacts and one bad row (row 6: not a phone number). The simulated provider
// answers the scripted reason of each attempt (`simulatedOutcomes`, D18): the first attempt
// at Bob fails (busy) and Cy's goes unanswered; their recalled second attempts are answered.
// Its flow sets what `simulatedResults` says on an answered call (D22): Cy's sets nothing, and
// Di's a name the task does not record.
const CSV = [
  'phoneNumber,customerName,simulatedOutcomes,simulatedResults',
  '+1 202 555 0101,Ada Lovelace,ANSWERED,outcome=confirmed',
  '+1 202 555 0102,Bob Busy,"BUSY,ANSWERED",outcome=declined',
  '+1 202 555 0103,Cy Silent,"NO_ANSWER,ANSWERED",',
  '+1 202 555 0104,Di Prompt,ANSWERED,outcome=confirmed;mood=happy',
  'not-a-number,Eve Invalid,ANSWERED,',
  '+1 202 555 0105,Ed Quick,ANSWERED,outcome=callback',
  '',
].join('\n');

// What the operator assigns the tenant (D22): a number in the contacts' area code (202, so local
// presence picks it for each of them) and one in London, and two flows.
const CALLER_IDS = ['+12025550199', '+442071838750'];
const FLOWS = [
  { id: 'flow-e2e-reminder', name: 'E2E reminder' },
  { id: 'flow-e2e-survey', name: 'E2E survey' },
];

// A number an administrator lists on the do-not-call list, which a member may not delete.
const DNC_NUMBER = '+12025550177';
const ONLY_ADMINS = 'only members of the group admins may make this request';

let api: LocalApi | undefined;
let profile: Awaited<ReturnType<typeof freshContext>> | undefined;
let page: Page;
let work: string | undefined;
const violations: string[] = [];
const ids: { dataSource?: string; task?: string } = {}; // taken from the console's URLs

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'outbound-e2e-'));
  api = await startLocalApi({ prefix: 'e2e', dialTickMs: 500 });
  const { context } = (profile = await freshContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true }));
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(UI_WAIT);
});

after(async () => {
  await profile?.close();
  await api?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs `body` as a subtest; once one fails, the later ones are skipped (they would too). */
function stepper(t: TestContext) {
  let broken = false;
  return async (name: string, body: () => Promise<void>) => {
    await t.test(name, { skip: broken && 'an earlier step failed' }, async () => {
      try {
        await body();
      } catch (error) {
        broken = true;
        const file = join(tmpdir(), `outbound-e2e-failed-${name.replace(/\W+/g, '-')}.png`);
        await page?.screenshot({ path: file, fullPage: true }).catch(() => {});
        console.error(`step "${name}" failed at ${page?.url()}; screenshot: ${file}`);
        console.error(
          `local-api ${api?.exited() ? 'exited' : 'is running'}; the end of its output:\n` +
            (api?.output().slice(-3000) ?? ''),
        );
        throw error;
      }
    });
  };
}

/** The live API (started in `before`). */
function local(): LocalApi {
  if (!api) throw new Error('the local API is not running');
  return api;
}

const nav = (name: string) => page.getByRole('link', { name, exact: true });
const button = (name: string) => page.getByRole('button', { name, exact: true });
const heading = (name: string) => page.getByRole('heading', { name, exact: true });
const taskStatus = () => page.getByTestId('task-status');

/** The task page's details named by `terms` (<dt>), as shown. */
async function details(terms: string[]): Promise<string[]> {
  const list = page.locator('dl.details');
  return Promise.all(terms.map(async (term) => ((await list.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').textContent({ timeout: 2_000 })) ?? '').trim()));
}

/** Signs out, then in with the development token `token`, and waits for the first page. */
async function signInAs(token: string) {
  await button('Sign out').click();
  await page.getByRole('textbox', { name: 'Development token' }).fill(token);
  await button('Sign in').click();
  await heading('Data sources').waitFor();
}

/** The table of a result attribute in the task's "Results": value, count and share per row. */
async function resultTable(name: string): Promise<string[][]> {
  const table = page.getByRole('region', { name: 'Results' }).getByRole('group', { name, exact: true }).getByRole('table');
  return table.locator('tbody tr').evaluateAll((trs: HTMLTableRowElement[]) => trs.map((tr) => [...tr.cells].map((cell) => cell.textContent?.trim() ?? '')));
}

/** Checks the page with axe-core and keeps its serious and critical violations. */
async function audit(where: string) {
  violations.push(...(await accessibilityViolations(page, where)));
}

/** The number a labelled statistics figure shows ("Calls" -> 5, "Success rate" -> 60). */
async function figure(label: string): Promise<number> {
  // Each figure is a <dd> labelled by its <dt> (aria-labelledby).
  const text = await page
    .getByRole('region', { name: 'Statistics' })
    .getByLabel(label, { exact: true })
    .textContent({ timeout: 2_000 });
  return Number((text ?? '').replace(/[^\d.]/g, ''));
}

/** The chart's intervals (its visually hidden table) summed by column: calls, successes, failures, no answer. */
async function chartTotals(): Promise<{ intervals: number; sums: number[] }> {
  const table = page.getByRole('table', { name: /Outcomes by interval/ });
  const rows: string[][] = await table
    .locator('tbody tr')
    .evaluateAll((trs: HTMLTableRowElement[]) => trs.map((tr) => [...tr.cells].map((cell) => cell.textContent?.trim() ?? '')));
  const sums = [2, 3, 4, 5].map((column) => rows.reduce((sum, row) => sum + Number(row[column]), 0));
  return { intervals: rows.length, sums };
}

async function waitForStatus(status: string) {
  await until(`the task is ${status}`, async () => {
    const shown = (await taskStatus().textContent({ timeout: 2_000 }))?.trim();
    assert.equal(shown, status);
  }, { timeout: WAIT, interval: 250 });
}

test('a whole campaign through the console', { timeout: 170_000 }, async (t) => {
  const step = stepper(t);

  await step('sign in with the development token', async () => {
    await page.goto(`${local().base}/#/signin`);
    await page.getByRole('textbox', { name: 'Development token' }).fill(local().token);
    await audit('sign in');
    await button('Sign in').click();
    await nav('Data sources').waitFor();
    await heading('Data sources').waitFor();
    assert.doesNotMatch(page.url(), /signin/);
    // The local server's config.json makes the console local; the header names the token's
    // tenant and user (D25).
    const header = (await page.getByRole('banner').textContent()) ?? '';
    assert.match(header, /Tenant acme · User dev-acme/);
  });

  await step('create a data source and find it', async () => {
    await button('New data source').click();
    const form = page.getByRole('form', { name: 'New data source' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill(DATA_SOURCE);
    await form.getByRole('textbox', { name: 'Description' }).fill('Made by the browser test');
    await form.getByRole('textbox', { name: 'Default country' }).fill('US');
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `“${DATA_SOURCE}” created` }).waitFor();
    await page.getByLabel('Search by name').fill(run);
    const link = page.getByRole('link', { name: DATA_SOURCE, exact: true });
    await link.waitFor();
    await until('the search leaves only it', async () => {
      assert.equal(await page.locator('tbody tr').count(), 1);
    });
    await audit('data sources');
    await screenshot(page, 'data-sources');
    await link.click();
    await heading(DATA_SOURCE).waitFor();
    ids.dataSource = page.url().match(/#\/datasource\/([^/?]+)/)?.[1];
    assert.ok(ids.dataSource, `no data source id in ${page.url()}`);
  });

  await step('import a CSV and read the report', async () => {
    const file = join(work!, 'contacts.csv');
    await writeFile(file, CSV);
    await page.getByText('Drop a CSV or Excel file here').waitFor();
    await page.getByLabel('Choose a file to import').setInputFiles(file);
    const progress = page.getByRole('progressbar', { name: 'Import progress' });
    await progress.waitFor();
    await until('the import progress is done', async () => {
      const done = await progress.evaluate((bar: HTMLProgressElement) => bar.value / bar.max);
      assert.equal(done, 1);
    });
    await page.getByText('contacts.csv: SUCCEEDED').waitFor();
    const report = page.getByRole('region', { name: 'Import report' });
    await report.getByRole('heading', { name: 'Import report' }).waitFor();
    const counts = async (name: string) =>
      (await report.getByRole('row', { name }).getByRole('cell').textContent())?.trim();
    assert.equal(await counts('Rows read'), '6');
    assert.equal(await counts('Imported'), '5');
    assert.equal(await counts('Failed'), '1');
    const refused = report.getByRole('table', { name: 'Refused rows' });
    const rows = await refused.locator('tbody tr').evaluateAll((trs: HTMLTableRowElement[]) =>
      trs.map((tr) => [...tr.cells].map((td) => td.textContent?.trim())),
    );
    assert.deepEqual(rows, [['6', 'not-a-number', 'invalid phoneNumber']]);
  });

  await step('the data source lists its contacts', async () => {
    const contacts = page.getByRole('table', { name: 'Contacts', exact: true });
    await until('the five contacts are listed', async () => {
      assert.equal(await contacts.locator('tbody tr').filter({ hasText: '+1202555010' }).count(), 5);
    });
    await audit('data source');
    await screenshot(page, 'data-source');
  });

  await step('the operator assigns caller IDs and flows; the settings page shows them and sets a default', async () => {
    const operator = await devToken('acme', ['outbound/operator']);
    // Throws (ApiError, with the envelope's message) unless it answers a 2xx with code 0.
    await local().api(operator).post('/api/operator/telephony/update', {
      body: { tenant: 'acme', callerIds: CALLER_IDS, contactFlows: FLOWS },
    });
    await nav('Settings').click();
    await heading('Settings').waitFor();
    const group = page.getByRole('group', { name: 'Caller IDs and contact flows' });
    await group.getByRole('list', { name: 'Caller IDs (2)' }).waitFor();
    assert.deepEqual(await group.getByRole('list', { name: 'Caller IDs (2)' }).getByRole('listitem').allTextContents(), CALLER_IDS);
    assert.deepEqual(
      await group.getByRole('list', { name: 'Contact flows (2)' }).getByRole('listitem').allTextContents(),
      FLOWS.map((f) => `${f.name} ${f.id}`),
    );
    await group.getByRole('combobox', { name: 'Default contact flow' }).selectOption({ label: 'E2E reminder' });
    await button('Save settings').click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
  });

  await step('create a task over it', async () => {
    await nav('Tasks').click();
    await heading('Tasks').waitFor();
    await button('New task').click();
    const form = page.getByRole('form', { name: 'New task' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill(TASK);
    await form.getByRole('textbox', { name: 'Description' }).fill('Five contacts, one attempt each');
    await form
      .getByRole('combobox', { name: 'Data source' })
      .selectOption({ label: `${DATA_SOURCE} (5 contacts)` });
    await form.getByRole('spinbutton', { name: 'Priority' }).fill('1');
    await form.getByRole('spinbutton', { name: 'Max dial count' }).fill('1');
    await form.getByRole('spinbutton', { name: 'Call interval (seconds)' }).fill('10');
    // Its telephony (D22): the tenant's numbers and flows are offered beside its defaults.
    const caller = form.getByRole('combobox', { name: 'Caller ID' });
    // The form fills its lists when the tenant's settings answer: wait for them, then read.
    await caller.locator('option', { hasText: CALLER_IDS[CALLER_IDS.length - 1] }).waitFor({ state: 'attached' });
    assert.deepEqual(await caller.locator('option').allTextContents(), ['Tenant default (not set)', 'Local presence', ...CALLER_IDS]);
    await caller.selectOption({ label: 'Local presence' });
    const flow = form.getByRole('combobox', { name: 'Contact flow' });
    await flow.locator('option', { hasText: 'E2E survey' }).waitFor({ state: 'attached' });
    assert.deepEqual(await flow.locator('option').allTextContents(), ['Tenant default (E2E reminder)', 'E2E reminder', 'E2E survey']);
    await flow.selectOption({ label: 'E2E survey' });
    const attributes = form.getByRole('group', { name: 'Call attributes (optional)' });
    // The data source's custom fields are offered beside the known ones.
    await attributes.getByRole('checkbox', { name: 'simulatedResults' }).waitFor();
    await attributes.getByRole('checkbox', { name: 'customerName' }).check();
    await attributes.getByRole('checkbox', { name: 'e164' }).check();
    await form.getByRole('button', { name: 'Add result name' }).click();
    await form.getByRole('textbox', { name: 'Result name 1' }).fill('outcome');
    await form.getByRole('combobox', { name: 'On voicemail' }).selectOption({ label: 'Leave a message' });
    await audit('task form');
    await screenshot(page, 'task-form');
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Task “${TASK}” created as a draft` }).waitFor();
  });

  await step('the tasks page lists it', async () => {
    await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'DRAFT' });
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: TASK, exact: true }) });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /DRAFT/);
    await audit('tasks');
    await screenshot(page, 'tasks');
    await row.getByRole('link', { name: TASK, exact: true }).click();
    await heading(TASK).waitFor();
    ids.task = page.url().match(/#\/task\/([^/?]+)/)?.[1];
    assert.ok(ids.task, `no task id in ${page.url()}`);
    await waitForStatus('DRAFT');
    await until('the details show its telephony', async () => {
      assert.deepEqual(await details(['Caller ID', 'Contact flow', 'Call attributes', 'Result attributes', 'On voicemail']), [
        'Local presence',
        'E2E survey',
        'customerName, e164',
        'outcome',
        'Leave a message',
      ]);
    });
  });

  await step('publish it and watch the statistics rise until it completes', async () => {
    await button('Publish').click();
    // What the page shows while it runs, sampled until it completes.
    const seen: { status: string | undefined; calls: number }[] = [];
    await until('the task is COMPLETED', async () => {
      const status = (await taskStatus().textContent({ timeout: 2_000 }))?.trim();
      seen.push({ status, calls: await figure('Calls') });
      assert.equal(status, 'COMPLETED');
    }, { timeout: WAIT, interval: 200 });
    const trace = JSON.stringify(seen);
    assert.ok(seen.some((s) => s.status === 'RUNNING'), `RUNNING was shown: ${trace}`);
    const calls = seen.map((s) => s.calls);
    assert.ok(calls.every((n, i) => i === 0 || n >= calls[i - 1]), `the calls only rise: ${trace}`);
    assert.ok(calls[0] < 5, `the calls rose while it ran: ${trace}`);
    await until('every call is counted', async () => {
      assert.equal(await figure('Contacts'), 5);
      assert.equal(await figure('Calls'), 5);
      assert.equal(await figure('Successes'), 3);
      assert.equal(await figure('Failures'), 1);
      assert.equal(await figure('No answer'), 1);
      assert.equal(await figure('Dial rate'), 100);
      assert.equal(await figure('Success rate'), 60);
    });
    const chart = page.getByTestId('stats-chart');
    await chart.waitFor();
    assert.ok((await chart.locator('path, polyline').count()) > 0, 'the chart draws lines');
    // The chart is the campaign's history: its intervals hold every call and outcome.
    await until('the chart counts every call', async () => {
      const { intervals, sums } = await chartTotals();
      assert.ok(intervals > 0, 'the chart lists its intervals');
      assert.deepEqual(sums, [5, 3, 1, 1]);
    });
  });

  await step('the diagnostics say why it is not dialling', async () => {
    const panel = page.getByRole('region', { name: "Why isn't it dialling?" });
    await until('the diagnostics show the completed task', async () => {
      assert.equal(
        (await panel.getByTestId('diagnosis').textContent({ timeout: 2_000 }))?.trim(),
        'It is not running (it is COMPLETED): only a RUNNING task dials.',
      );
      const text = await panel.textContent({ timeout: 2_000 });
      assert.match(text ?? '', /Of 5 contacts: 0 not dialled yet, 0 waiting, 0 in flight, 5 final\./);
      assert.match(text ?? '', /No contact is skipped\./);
    });
    // The results of the answered calls (D22): Ada, Di and Ed so far.
    await until('the results show the answered calls', async () => {
      assert.deepEqual(await resultTable('outcome'), [
        ['confirmed', '2', '66.7%'],
        ['callback', '1', '33.3%'],
      ]);
    });
    await audit('task');
    await screenshot(page, 'task');
  });

  await step('recall a chosen failed contact, then the other, and watch it complete each time', async () => {
    // The busy contact alone, picked from the failed ones (its row says BUSY).
    await button('Choose contacts to recall').click();
    const picker = page.getByRole('group', { name: /Failed or unanswered contacts \(2\)/ });
    await picker.waitFor();
    const busy = picker.getByRole('row').filter({ hasText: 'BUSY' });
    await busy.getByRole('checkbox').check();
    await button('Recall selected (1)').click();
    await page.getByRole('status').filter({ hasText: 'Recalled 1 contact:' }).waitFor();
    await until('the chosen contact was called again', async () => {
      assert.equal(await figure('Calls'), 6);
      assert.equal(await figure('Successes'), 4);
    });
    await waitForStatus('COMPLETED');
    // Then every contact still failed: the unanswered one.
    await button('Recall failed').click();
    await page.getByRole('status').filter({ hasText: 'Recalled 1 contact:' }).waitFor();
    await until('the recalled calls are counted', async () => {
      assert.equal(await figure('Calls'), 7);
    });
    await waitForStatus('COMPLETED');
    // The figures count calls: the two recalled calls were answered.
    await until('every recalled call succeeded', async () => {
      assert.equal(await figure('Successes'), 5);
      assert.equal(await figure('Failures'), 1);
      assert.equal(await figure('No answer'), 1);
    });
    // Bob's recalled call set a result, Cy's none.
    await until('the chart counts the recalled calls', async () => {
      assert.deepEqual((await chartTotals()).sums, [7, 5, 1, 1]);
    });
    await until('the results count the recalled calls', async () => {
      assert.deepEqual(await resultTable('outcome'), [
        ['confirmed', '2', '40%'],
        ['callback', '1', '20%'],
        ['declined', '1', '20%'],
        ['Not set', '1', '20%'],
      ]);
    });
  });

  await step('promise a contact a callback, see it listed, pause and resume the task it keeps running, and cancel it (D31)', async () => {
    const form = page.getByRole('form', { name: 'Set a callback' });
    const contact = form.getByRole('combobox', { name: 'Contact' });
    const ada = await contact.locator('option', { hasText: 'Ada Lovelace' }).getAttribute('value');
    await contact.selectOption(ada!);
    // Two hours ahead, typed in the browser's zone as a person would.
    const at = new Date(Date.now() + 2 * 3_600_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const typed = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
    await form.getByLabel('Call back at').fill(typed);
    await form.getByRole('button', { name: 'Set callback' }).click();
    await page.getByRole('status').filter({ hasText: 'Callback set.' }).waitFor();
    const callbacks = page.getByRole('table', { name: 'Callbacks' });
    const row = callbacks.getByRole('row').filter({ hasText: '+12025550101' });
    await until('the callback is listed as pending, set by the API, at the time typed', async () => {
      assert.deepEqual(await row.getByRole('cell').allTextContents(), ['+12025550101', typed.replace('T', ' '), 'The API', 'Pending', '—', 'Cancel callback to +12025550101']);
    });
    // The COMPLETED task runs again for it.
    await waitForStatus('RUNNING');
    await audit('task with a callback');
    // Paused while it waits for the callback, then resumed: the chart shades the pause.
    await button('Pause').click();
    await waitForStatus('PAUSED');
    await until('the chart shows the pause', async () => {
      assert.equal(await page.getByTestId('chart-pause').count(), 1);
      assert.match((await page.locator('.chart-figure figcaption').textContent({ timeout: 2_000 })) ?? '', /Paused \(grey\): .*–now\./);
    });
    await button('Resume').click();
    await waitForStatus('RUNNING');
    await until('the chart shows the pause ended', async () => {
      assert.doesNotMatch((await page.locator('.chart-figure figcaption').textContent({ timeout: 2_000 })) ?? '', /–now/);
      assert.equal(await page.getByTestId('chart-pause').count(), 1);
    });
    await button('Cancel callback to +12025550101').click();
    await page.getByRole('status').filter({ hasText: 'Callback cancelled.' }).waitFor();
    await until('the callback is listed as cancelled', async () => {
      assert.deepEqual((await row.getByRole('cell').allTextContents()).slice(3, 5), ['Cancelled', '—']);
    });
    await waitForStatus('COMPLETED');
  });

  await step('every call went from the local number through the task’s flow with its attributes', async () => {
    const calls = (await local().calls()).filter((c) => c.taskId === ids.task);
    assert.equal(calls.length, 7, JSON.stringify(calls));
    for (const call of calls) {
      assert.equal(call.tenant, 'acme');
      assert.equal(call.callerId, CALLER_IDS[0], JSON.stringify(call));
      assert.equal(call.contactFlowId, 'flow-e2e-survey', JSON.stringify(call));
      assert.equal(call.attributes.e164, call.to, JSON.stringify(call));
      assert.ok(call.attributes.customerName, JSON.stringify(call));
    }
    const ada = calls.find((c) => c.to === '+12025550101');
    assert.equal(ada?.attributes.customerName, 'Ada Lovelace');
  });

  await step('export the outcomes as CSV', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      button('Export CSV').click(),
    ]);
    assert.match(download.suggestedFilename(), new RegExp(`^task_contacts_${ids.task}.*\\.csv$`));
    const file = join(work!, download.suggestedFilename());
    await download.saveAs(file);
    const text = await readFile(file, 'utf8');
    const lines = text.replace(/^\uFEFF/, '').trimEnd().split(/\r?\n/);
    assert.equal(
      lines[0],
      'id,phoneNumber,customerName,address,orderAmount,simulatedOutcomes,simulatedResults,status,callCount,createTime,updateTime,lastReason,skipReason,callerId,messageLeft,callbackAt,result.outcome',
    );
    const rows = csvRecords(text);
    assert.equal(rows.length, 5, `five contacts in\n${text}`);
    // Each row: the last attempt answered, from the local number, and what its flow set (D22).
    assert.deepEqual(
      // Ada's callback was cancelled: no callback time shown (D31).
      rows.map((r) => [r.customerName, r.lastReason, r.skipReason, r.callerId, r['result.outcome'], r.callbackAt]).sort(),
      [
        ['Ada Lovelace', 'ANSWERED', '', CALLER_IDS[0], 'confirmed', ''],
        ['Bob Busy', 'ANSWERED', '', CALLER_IDS[0], 'declined', ''],
        ['Cy Silent', 'ANSWERED', '', CALLER_IDS[0], '', ''],
        ['Di Prompt', 'ANSWERED', '', CALLER_IDS[0], 'confirmed', ''],
        ['Ed Quick', 'ANSWERED', '', CALLER_IDS[0], 'callback', ''],
      ],
    );
  });

  await step('the settings and do-not-call pages', async () => {
    await nav('Settings').click();
    await heading('Settings').waitFor();
    await audit('settings');
    await screenshot(page, 'settings');
    await nav('Do-not-call list').click();
    await heading('Do-not-call list').waitFor();
    await audit('do-not-call list');
    await screenshot(page, 'dnc');
  });

  await step('a member who is not in admins sees the settings read-only and no Delete', async () => {
    // The administrator lists a number, and is offered its Delete.
    await nav('Do-not-call list').click();
    await heading('Do-not-call list').waitFor();
    const add = page.getByRole('form', { name: 'Add a number' });
    await add.getByRole('textbox', { name: 'Phone number' }).fill(DNC_NUMBER);
    await add.getByRole('textbox', { name: 'Reason' }).fill('Asked by the browser test');
    await add.getByRole('button', { name: 'Add to list' }).click();
    await page.getByRole('status').filter({ hasText: 'will never be called.' }).waitFor();
    const listed = page.getByRole('row').filter({ hasText: DNC_NUMBER });
    await listed.getByRole('button', { name: /^Delete / }).waitFor();

    const member = await devToken('acme', [], { member: true });
    // The API refuses the member a change (the console does not decide that).
    await assert.rejects(local().api(member).post('/api/settings/update', { body: { defaultCountry: 'GB' } }), (error: ApiError) => {
      assert.equal(error.status, 403);
      assert.equal(error.message, ONLY_ADMINS);
      return true;
    });
    await signInAs(member);
    await nav('Settings').click();
    await heading('Settings').waitFor();
    const form = page.getByRole('form', { name: 'Settings' });
    const flow = form.getByRole('combobox', { name: 'Default contact flow' });
    await flow.waitFor();
    await page.getByText('Only members of the group admins can change these settings.').waitFor();
    assert.equal(await flow.inputValue(), FLOWS[0].id, 'the member sees the settings as saved');
    for (const control of [form.getByRole('textbox', { name: 'Default country' }), flow, form.getByRole('spinbutton', { name: 'Max calls' })]) {
      assert.equal(await control.isDisabled(), true);
    }
    assert.equal(await form.getByRole('button', { name: 'Save settings' }).count(), 0);
    await audit('settings (member)');

    await nav('Do-not-call list').click();
    await heading('Do-not-call list').waitFor();
    await listed.waitFor();
    await page.getByText('Only members of the group admins can delete numbers from the list.').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Delete / }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Add to list' }).isEnabled(), true, 'a member still adds numbers');
    await audit('do-not-call list (member)');
  });

  await step('the administrator changes the settings and deletes the number again', async () => {
    await signInAs(local().token);
    await nav('Settings').click();
    await heading('Settings').waitFor();
    const caller = page.getByRole('combobox', { name: 'Default caller ID' });
    await caller.locator('option', { hasText: CALLER_IDS[1] }).waitFor({ state: 'attached' });
    await caller.selectOption({ label: CALLER_IDS[1] });
    await button('Save settings').click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    assert.equal(await caller.inputValue(), CALLER_IDS[1]);
    assert.equal(await page.getByText(/Only members of the group admins/).count(), 0);

    await nav('Do-not-call list').click();
    await heading('Do-not-call list').waitFor();
    const listed = page.getByRole('row').filter({ hasText: DNC_NUMBER });
    page.once('dialog', (dialog) => void dialog.accept());
    await listed.getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('status').filter({ hasText: 'removed from the list.' }).waitFor();
    await until('the number is no longer listed', async () => {
      assert.equal(await listed.count(), 0);
    });
  });

  await step('the task page at phone width', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${local().base}/#/task/${ids.task}`);
    await waitForStatus('COMPLETED');
    await page.getByTestId('stats-chart').waitFor();
    await audit('task (phone)');
    await screenshot(page, 'task-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await step('the bus delivered the domain events', async () => {
    const ofTask = (events: BusEvent[]) => events.filter((e) => e.detail?.taskId === ids.task);
    const events = await until('the events arrived', async () => {
      const all = await local().events();
      const changes = eventsOf(ofTask(all), 'TaskStateChanged');
      assert.equal(changes.filter((e) => e.detail.to === 'COMPLETED').length, 4);
      assert.equal(eventsOf(ofTask(all), 'CallCompleted').length, 7);
      return all;
    }, { timeout: 30_000, interval: 500 });
    for (const event of events) assert.equal(event.detail.tenant, 'acme');
    const changes = eventsOf(ofTask(events), 'TaskStateChanged')
      .map((e) => `${e.detail.from}->${e.detail.to}:${e.detail.cause}`);
    assert.deepEqual(changes, [
      'DRAFT->RUNNING:publish',
      'RUNNING->COMPLETED:complete',
      'COMPLETED->RUNNING:recall',
      'RUNNING->COMPLETED:complete',
      'COMPLETED->RUNNING:recall',
      'RUNNING->COMPLETED:complete',
      // The callback requeued it as a recall does (D31), and it completed once it was cancelled.
      'COMPLETED->RUNNING:recall',
      'RUNNING->PAUSED:pause',
      'PAUSED->RUNNING:resume',
      'RUNNING->COMPLETED:complete',
    ]);
    const calls = eventsOf(ofTask(events), 'CallCompleted');
    const reasons = calls.map((e) => `${e.detail.attempt}:${e.detail.reason}`).sort();
    assert.deepEqual(reasons, [
      '1:ANSWERED',
      '1:ANSWERED',
      '1:ANSWERED',
      '1:BUSY',
      '1:NO_ANSWER',
      '2:ANSWERED',
      '2:ANSWERED',
    ]);
    // What each answered call's flow set, of the task's result attributes only (D22).
    const results = calls.filter((e) => e.detail.reason === 'ANSWERED').map((e) => e.detail.results?.outcome ?? '').sort();
    assert.deepEqual(results, ['', 'callback', 'confirmed', 'confirmed', 'declined']);
    assert.ok(calls.every((e) => e.detail.callerId === CALLER_IDS[0] && !('mood' in (e.detail.results ?? {}))), JSON.stringify(calls));
    const imports = eventsOf(events, 'ImportFinished').filter((e) => e.detail.dataSourceId === ids.dataSource);
    assert.equal(imports.length, 1);
    assert.equal(imports[0].detail.status, 'SUCCEEDED');
    assert.equal(imports[0].detail.successCount, 5);
    assert.equal(imports[0].detail.failCount, 1);
  });

  await step('no serious or critical accessibility violations', async () => {
    assert.deepEqual(violations, [], `axe-core found:\n${violations.join('\n')}`);
  });
});
