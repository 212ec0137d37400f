import type { ComponentChildren } from 'preact';

/** The one row of a list table with nothing in it, once the list has loaded. */
export function EmptyRow(props: { show: boolean; columns: number; children: ComponentChildren }) {
  if (!props.show) return null;
  return (
    <tr>
      <td colSpan={props.columns}>{props.children}</td>
    </tr>
  );
}
