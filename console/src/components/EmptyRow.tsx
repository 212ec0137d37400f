import type { ComponentChildren } from 'preact';

/**
 * The one row of a list table with nothing in it: "Loading…" (busy) while its first page loads,
 * then `children` (the empty state) once it has loaded with no row. Nothing when the list has
 * rows, or when loading it failed (its alert says why, not "nothing yet").
 */
export function EmptyRow(props: { loading: boolean; empty: boolean; error?: unknown; columns: number; children: ComponentChildren }) {
  if (!props.empty) return null;
  if (props.loading) {
    return (
      <tr aria-busy="true">
        <td colSpan={props.columns}>
          <span role="status" class="muted">
            Loading…
          </span>
        </td>
      </tr>
    );
  }
  if (props.error) return null;
  return (
    <tr>
      <td colSpan={props.columns}>{props.children}</td>
    </tr>
  );
}
