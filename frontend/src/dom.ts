// Tiny DOM helpers: elements are built with textContent, never innerHTML, so names from
// events cannot inject markup.

export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((event: any) => void)>;

export function h(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(key.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function link(href: string, text: string, attrs: Attrs = {}): HTMLElement {
  return h("a", { href, ...attrs }, text);
}

/** "2026-11-03 02:01:49 UTC" — times are shown in UTC, as the API returns them. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function stateBadge(state: string | null | undefined): HTMLElement {
  const text = state ?? "UNKNOWN";
  return h("span", { class: `state state-${text.toLowerCase()}` }, text);
}

/** Append children to an element, skipping empty ones (null, undefined, false). */
export function add(parent: HTMLElement, ...children: (Child | Child[])[]): HTMLElement {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/** Replace an element's children, skipping empty ones. */
export function fill(parent: HTMLElement, ...children: (Child | Child[])[]): HTMLElement {
  parent.replaceChildren();
  return add(parent, ...children);
}

export function table(headers: string[], rows: (Child | Child[])[][], attrs: Attrs = {}): HTMLElement {
  return h(
    "table",
    attrs,
    h("thead", {}, h("tr", {}, headers.map((title) => h("th", {}, title)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, ...(Array.isArray(cell) ? cell : [cell])))))),
  );
}

/** Facets as collapsible JSON blocks, one per facet. */
export function facetList(facets: Record<string, unknown> | null | undefined): HTMLElement {
  const names = Object.keys(facets ?? {}).sort();
  if (!names.length) return h("p", { class: "muted" }, "No facets.");
  return h(
    "div",
    { class: "facets" },
    names.map((name) =>
      h("details", { class: "facet", "data-facet": name }, h("summary", {}, name),
        h("pre", {}, JSON.stringify((facets as Record<string, unknown>)[name], null, 2))),
    ),
  );
}

export function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

export function errorBox(error: unknown): HTMLElement {
  const message = error instanceof Error ? error.message : String(error);
  return h("div", { class: "error", role: "alert" }, message);
}
