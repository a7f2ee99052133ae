// Run ids (UUIDs) shown short but never ambiguously: every run id on the page is cut to the
// shortest prefix (8 characters at least) that no other run id on the page shares, the full
// id is in the tooltip and a copy button puts it on the clipboard.
import { h, link } from "./dom";

/** The fewest leading characters (at least `min`) that tell every id in `ids` apart. */
export function shortRunIds(ids: Iterable<string>, min = 8): Map<string, string> {
  const unique = [...new Set(ids)].sort();
  let length = min;
  for (let i = 1; i < unique.length; i++) {
    const a = unique[i - 1], b = unique[i];
    let same = 0;
    while (same < a.length && a[same] === b[same]) same++;
    length = Math.max(length, same + 1);
  }
  return new Map(unique.map((id) => [id, id.length <= length ? id : id.slice(0, length)]));
}

/**
 * A run id as a link to its run page plus a copy button. Its text is set by `relabelRunIds`,
 * which every render of the page triggers (see `watchRunIds`).
 */
export function runIdLink(href: string, id: string): HTMLElement {
  const copy = h("button", { type: "button", class: "copy-id", title: "copy the full run id", "aria-label": `copy run id ${id}`,
    onclick: () => void navigator.clipboard?.writeText(id).then(() => { copy.dataset.copied = "true"; }, () => undefined) }, "⧉");
  return h("span", { class: "run-id-cell" },
    link(href, id.slice(0, 8), { class: "run-id mono", title: id, "data-run-id": id }), copy);
}

/** Set every run id link's text to the prefix that is unique among the run ids on the page. */
export function relabelRunIds(root: ParentNode = document): void {
  const links = [...root.querySelectorAll<HTMLElement>("[data-run-id]")];
  const short = shortRunIds(links.map((a) => a.dataset.runId!));
  for (const a of links) {
    const text = short.get(a.dataset.runId!)!;
    if (a.textContent !== text) a.textContent = text;
  }
}

/** Keep run ids unambiguous as the page changes (lists paged, children loaded). */
export function watchRunIds(root: HTMLElement): void {
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => { queued = false; relabelRunIds(root); });
  }).observe(root, { childList: true, subtree: true });
}
