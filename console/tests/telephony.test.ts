// A task's telephony in the form (D22) and the rows of its results.
import { describe, expect, it } from 'vitest';
import type { Contact, TaskView } from '../src/api/types';
import { resultRows } from '../src/state/results';
import { attributeChoices, callerIdLabel, flowLabel, resultNamesProblem, telephonyBody, telephonyFrom } from '../src/state/telephony';

const contact = (custom: Record<string, string>) =>
  ({ id: 'c', dataSourceId: 'd', phoneNumber: '1', status: 0, callCount: 0, createTime: 't', updateTime: 't', customerName: 'A', ...custom }) as unknown as Contact;

describe('call attribute choices', () => {
  it('offers the known fields, then the custom ones in the order first seen, then the ones a task names', () => {
    const contacts = [contact({ plan: 'gold' }), contact({ orderId: '1', plan: 'x' })];
    expect(attributeChoices(contacts, ['plan', 'gone'])).toEqual(['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164', 'plan', 'orderId', 'gone']);
  });

  it('never offers one of the service’s own names', () => {
    expect(attributeChoices([contact({ tenant: 'x', attempt: '2', keep: 'y' })], [])).toEqual(['customerName', 'address', 'orderAmount', 'phoneNumber', 'e164', 'keep']);
  });
});

describe('result names', () => {
  it('takes up to 10 distinct names of letters, digits and _', () => {
    expect(resultNamesProblem([])).toBeNull();
    expect(resultNamesProblem(['outcome', 'Callback_At_2', 'x'.repeat(32)])).toBeNull();
    expect(resultNamesProblem(Array.from({ length: 10 }, (_, i) => `r${i}`))).toBeNull();
    expect(resultNamesProblem(Array.from({ length: 11 }, (_, i) => `r${i}`))).toBe('resultAttributes must have at most 10 names');
    expect(resultNamesProblem(['dash-ed'])).toBe("resultAttributes[0] must be 1-32 letters, digits or '_'");
    expect(resultNamesProblem(['a', 'contactId'])).toBe("resultAttributes[1] 'contactId' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)");
    expect(resultNamesProblem(['outcome', 'customerName'], ['customerName'])).toBe(
      "resultAttributes[1] 'customerName' is one of the task's callAttributes: a result is only what the flow sets",
    );
    expect(resultNamesProblem(['e164'])).toBe("resultAttributes[0] 'e164' is the called number: a result is only what the flow sets");
    expect(resultNamesProblem(['a', 'b', 'a '])).toBe("resultAttributes[2] 'a' is listed twice");
  });
});

describe('telephony body', () => {
  const chosen = { callerId: 'LOCAL_PRESENCE', contactFlowId: 'f', callAttributes: ['e164'], resultAttributes: [' outcome '], voicemail: 'LEAVE_MESSAGE' as const };

  it('leaves the defaults out of a new task and sends everything chosen', () => {
    expect(telephonyBody(telephonyFrom(), false)).toEqual({});
    expect(telephonyBody(chosen, false)).toEqual({ ...chosen, resultAttributes: ['outcome'] });
  });

  it('sends every field of an edit, empty to clear', () => {
    expect(telephonyBody(telephonyFrom(), true)).toEqual({ callerId: '', contactFlowId: '', callAttributes: [], resultAttributes: [], voicemail: 'HANG_UP' });
  });

  it('reads a task’s fields', () => {
    const task = { callerId: null, contactFlowId: 'f', callAttributes: ['a'], resultAttributes: ['b'], voicemail: 'LEAVE_MESSAGE' } as unknown as TaskView;
    expect(telephonyFrom(task)).toEqual({ callerId: '', contactFlowId: 'f', callAttributes: ['a'], resultAttributes: ['b'], voicemail: 'LEAVE_MESSAGE' });
  });
});

describe('telephony labels', () => {
  const settings = {
    callerIds: ['+12125550100'],
    contactFlows: [{ id: 'f1', name: 'Reminder' }],
    queues: [],
    defaultCallerId: '+12125550100',
    defaultContactFlowId: 'f1',
  };

  it('names the caller ID, and what the tenant’s default is', () => {
    expect(callerIdLabel('LOCAL_PRESENCE')).toBe('Local presence');
    expect(callerIdLabel('+442071838750')).toBe('+442071838750');
    expect(callerIdLabel(null, settings)).toBe('Tenant default (+12125550100)');
    expect(callerIdLabel(null, null)).toBe('Tenant default (not set)');
  });

  it('names the flow by its name where the tenant has it, else by its id', () => {
    expect(flowLabel('f1', settings)).toBe('Reminder');
    expect(flowLabel('f9', settings)).toBe('f9');
    expect(flowLabel(null, settings)).toBe('Tenant default (Reminder)');
    expect(flowLabel('', { ...settings, defaultContactFlowId: null })).toBe('Tenant default (not set)');
  });
});

describe('result rows', () => {
  it('lists the values, then other values and not set, each with its share of the answered contacts', () => {
    const { rows, total } = resultRows({ name: 'outcome', values: [{ value: 'yes', count: 6 }, { value: 'no', count: 2 }], otherCount: 1, missingCount: 1 });
    expect(total).toBe(10);
    expect(rows).toEqual([
      { label: 'yes', count: 6, share: 0.6 },
      { label: 'no', count: 2, share: 0.2 },
      { label: 'Other values', count: 1, share: 0.1, aside: true },
      { label: 'Not set', count: 1, share: 0.1, aside: true },
    ]);
  });

  it('leaves out empty other and not set rows, and has no share without answers', () => {
    expect(resultRows({ name: 'x', values: [{ value: 'a', count: 3 }], otherCount: 0, missingCount: 0 }).rows).toEqual([{ label: 'a', count: 3, share: 1 }]);
    expect(resultRows({ name: 'x', values: [], otherCount: 0, missingCount: 0 })).toEqual({ rows: [], total: 0 });
  });
});
