import { describe, expect, it } from 'vitest';
import { formFromSettings, settingsUpdate } from '../src/state/settingsDiff';

const empty = { defaultCountry: null, callingHours: null, frequencyCap: null, updateTime: null, callerIds: [], contactFlows: [], queues: [] };
const full = { defaultCountry: 'US', callingHours: { start: '08:00', end: '21:00' }, frequencyCap: { maxCalls: 3, periodHours: 24 }, updateTime: 'x', callerIds: [], contactFlows: [], queues: [] };

const telephony = { ...full, callerIds: ['+12125550100'], contactFlows: [{ id: 'f1', name: 'Flow' }], defaultCallerId: '+12125550100', defaultContactFlowId: null };

describe('settings update body', () => {
  it('sends only changed fields', () => {
    const form = { ...formFromSettings(empty), defaultCountry: 'us' };
    expect(settingsUpdate(empty, form)).toEqual({ body: { defaultCountry: 'US' } });
    expect(settingsUpdate(full, formFromSettings(full))).toEqual({ body: {} });
  });

  it('sends null to clear', () => {
    const form = { ...formFromSettings(full), hoursStart: '', hoursEnd: '', maxCalls: '', periodHours: '' };
    expect(settingsUpdate(full, form)).toEqual({ body: { callingHours: null, frequencyCap: null } });
  });

  it('refuses half-filled groups', () => {
    expect(settingsUpdate(empty, { ...formFromSettings(empty), hoursStart: '08:00' })).toHaveProperty('error');
    expect(settingsUpdate(empty, { ...formFromSettings(empty), defaultCountry: 'USA' })).toHaveProperty('error');
  });

  it('sends a changed default caller ID or flow, null to clear one (D22)', () => {
    expect(formFromSettings(telephony)).toMatchObject({ defaultCallerId: '+12125550100', defaultContactFlowId: '' });
    expect(settingsUpdate(telephony, formFromSettings(telephony))).toEqual({ body: {} });
    const form = { ...formFromSettings(telephony), defaultCallerId: '', defaultContactFlowId: 'f1' };
    expect(settingsUpdate(telephony, form)).toEqual({ body: { defaultCallerId: null, defaultContactFlowId: 'f1' } });
    // None set, none sent.
    expect(settingsUpdate(full, formFromSettings(full))).toEqual({ body: {} });
  });
});
