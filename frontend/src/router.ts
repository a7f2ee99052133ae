// Client-side routing: every view has a URL; the server answers index.html for all of them.

export type View = (root: HTMLElement, url: URL) => Promise<void> | void;

interface RouteEntry {
  pattern: RegExp;
  view: (params: string[]) => View;
}

const routes: RouteEntry[] = [];
let current = 0;
// Called before each view draws; the API layer registers its per-view answer reset here,
// so the router does not depend on it (auth needs the router to redraw).
const viewStarts: Array<() => void> = [];

export function onViewStart(listener: () => void): void {
  viewStarts.push(listener);
}

export function route(pattern: RegExp, view: (params: string[]) => View): void {
  routes.push({ pattern, view });
}

export async function render(): Promise<void> {
  const root = document.getElementById("app")!;
  const url = new URL(window.location.href);
  const token = ++current;
  for (const entry of routes) {
    const match = entry.pattern.exec(url.pathname);
    if (!match) continue;
    const params = match.slice(1).map((part) => decodeURIComponent(part));
    root.replaceChildren();
    root.dataset.loading = "true";
    for (const listener of viewStarts) listener();
    try {
      await entry.view(params)(root, url);
    } finally {
      if (token === current) delete root.dataset.loading;
    }
    return;
  }
  root.replaceChildren(document.createTextNode("Page not found."));
}

/** Go to a page URL without reloading; `replace` keeps the history entry (view-state tweaks). */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  void render();
}

export function startRouter(): void {
  window.addEventListener("popstate", () => void render());
  document.addEventListener("click", (event) => {
    const anchor = (event.target as HTMLElement).closest("a");
    if (!anchor || anchor.target || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    const url = new URL(anchor.href, window.location.href);
    if (url.origin !== window.location.origin || url.pathname.startsWith("/api/")) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  void render();
}
