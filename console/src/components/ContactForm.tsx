import { useState } from 'preact/hooks';
import type { Contact } from '../api/types';
import { FormFooter } from './FormFooter';

export interface ContactFields {
  phoneNumber: string;
  customerName: string;
  address: string;
  orderAmount: string;
}

const FIELDS: { key: keyof ContactFields; label: string; max: number }[] = [
  { key: 'phoneNumber', label: 'Phone number', max: 40 },
  { key: 'customerName', label: 'Customer name', max: 100 },
  { key: 'address', label: 'Address', max: 500 },
  { key: 'orderAmount', label: 'Order amount', max: 100 },
];

/** Add or edit a contact's phone number and known fields (D7). */
export function ContactForm(props: {
  label: string;
  initial?: Contact;
  submitLabel: string;
  busy: boolean;
  onSubmit: (fields: ContactFields) => void;
  onCancel: () => void;
}) {
  const init = props.initial;
  const [values, setValues] = useState<ContactFields>({
    phoneNumber: init?.phoneNumber ?? '',
    customerName: init?.customerName ?? '',
    address: init?.address ?? '',
    orderAmount: init?.orderAmount ?? '',
  });
  const prefix = init ? `contact-${init.id}` : 'contact-new';
  return (
    <form
      class="card form-grid"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit({ ...values, phoneNumber: values.phoneNumber.trim() });
      }}
    >
      {FIELDS.map((f) => (
        <div class="field" key={f.key}>
          <label for={`${prefix}-${f.key}`}>{f.label}</label>
          <input
            id={`${prefix}-${f.key}`}
            type={(f.key === 'phoneNumber' ? 'tel' : 'text') as 'text'}
            required={f.key === 'phoneNumber'}
            maxLength={f.max}
            value={values[f.key]}
            onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
          />
        </div>
      ))}
      <FormFooter busy={props.busy} submitLabel={props.submitLabel} onCancel={props.onCancel} />
    </form>
  );
}
