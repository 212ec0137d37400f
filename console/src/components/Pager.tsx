export const PAGE_SIZE = 20;

export function Pager(props: { pageNum: number; pageSize: number; total: number; onPage: (n: number) => void; label: string }) {
  const { pageNum, pageSize, total, onPage, label } = props;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={() => onPage(pageNum - 1)} disabled={pageNum <= 1}>
        Previous
      </button>
      <span>
        Page {pageNum} of {pages} ({total.toLocaleString('en-US')} in all)
      </span>
      <button type="button" onClick={() => onPage(pageNum + 1)} disabled={pageNum >= pages}>
        Next
      </button>
    </nav>
  );
}
