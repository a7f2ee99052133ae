// Long lists a page at a time: a table that shows `pageSize` rows and asks for the next or
// previous page (from the server with limit/offset, or from a list already in hand), so no
// list ever puts more than a few hundred rows in the page.
import { h, type Child } from "./dom";

export const PAGE_SIZE = 100;

export interface Page {
  rows: (Child | Child[])[][];
  totalCount: number;
}

export interface PagedTableOptions {
  headers: string[];
  /** Rows `offset`..`offset + limit` and how many there are in all. */
  fetch: (limit: number, offset: number) => Promise<Page>;
  pageSize?: number;
  /** What the rows are, for the pager's text and its label ("runs"). */
  noun: string;
  attrs?: Record<string, string>;
}

/** A paged table; resolves once its first page is shown. */
export async function pagedTable(options: PagedTableOptions): Promise<HTMLElement> {
  const size = options.pageSize ?? PAGE_SIZE;
  const body = h("tbody", {});
  const table = h("table", options.attrs ?? {},
    h("thead", {}, h("tr", {}, options.headers.map((title) => h("th", { scope: "col" }, title)))), body);
  const status = h("span", { class: "pager-status", "aria-live": "polite" });
  const previous = h("button", { type: "button", "data-action": "previous-page" }, "‹ previous") as HTMLButtonElement;
  const next = h("button", { type: "button", "data-action": "next-page" }, "next ›") as HTMLButtonElement;
  const nav = h("nav", { class: "pager", "aria-label": `pages of ${options.noun}` }, previous, " ", status, " ", next);
  const box = h("div", { class: "paged" }, table, nav);
  let offset = 0;
  const show = async (at: number) => {
    box.dataset.loading = "true";
    try {
      const page = await options.fetch(size, at);
      offset = at;
      body.replaceChildren(...page.rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, ...(Array.isArray(cell) ? cell : [cell]))))));
      const last = Math.min(page.totalCount, at + page.rows.length);
      status.textContent = page.totalCount
        ? `${(at + 1).toLocaleString("en")}–${last.toLocaleString("en")} of ${page.totalCount.toLocaleString("en")} ${options.noun}`
        : `no ${options.noun}`;
      previous.disabled = at <= 0;
      next.disabled = last >= page.totalCount;
      nav.hidden = page.totalCount <= size && at === 0;
    } finally {
      delete box.dataset.loading;
    }
  };
  previous.addEventListener("click", () => void show(Math.max(0, offset - size)));
  next.addEventListener("click", () => void show(offset + size));
  await show(0);
  return box;
}

/** A page of a list already fetched whole. */
export function fromList<T>(items: T[], row: (item: T, index: number) => (Child | Child[])[]): PagedTableOptions["fetch"] {
  return async (limit, offset) => ({ rows: items.slice(offset, offset + limit).map((item, i) => row(item, offset + i)), totalCount: items.length });
}
