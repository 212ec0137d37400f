export const PAGE_SIZE = 20;

/** The largest page the API gives (`pageSize` 1-100 in openapi.yaml): for the console's own look-ups
 * (the data-source picker, the names of the task list's data sources, a data source's fields). */
export const LOOKUP_PAGE_SIZE = 100;

/** Previous and Next of a cursor-paged list: Next follows the page's `nextToken` (D5). */
export function Pager(props: {
  pageNum: number;
  pageSize: number;
  total: number;
  nextToken?: string | null;
  onNext: (nextToken: string) => void;
  onPrevious: () => void;
  label: string;
}) {
  const { pageNum, pageSize, total, nextToken, label } = props;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={props.onPrevious} disabled={pageNum <= 1}>
        Previous
      </button>
      <span>
        Page {pageNum} of {pages} ({total.toLocaleString('en-US')} in all)
      </span>
      <button type="button" onClick={() => nextToken && props.onNext(nextToken)} disabled={!nextToken}>
        Next
      </button>
    </nav>
  );
}
