/** The end of every edit form: what is wrong with the input, if anything, then submit and cancel. */
export function FormFooter(props: { problem?: string | null; busy?: boolean; submitLabel: string; onCancel: () => void }) {
  return (
    <>
      {props.problem && (
        <p role="alert" class="alert">
          {props.problem}
        </p>
      )}
      <div class="buttons">
        <button type="submit" disabled={props.busy}>
          {props.submitLabel}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
