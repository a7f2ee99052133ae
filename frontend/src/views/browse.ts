// The home page (every namespace's datasets and jobs) and the search results page.
import { api, nodeIds, pageUrl } from "../api";
import { errorBox, formatTime, h, link, section, stateBadge } from "../dom";
import { fromList, pagedTable } from "../pager";
import { searchBox } from "../search-box";

export async function homeView(root: HTMLElement): Promise<void> {
  root.append(h("div", { class: "hero" }, h("h1", {}, "Lineage"), h("p", { class: "muted" },
    "Start from any dataset or job: search, or pick one below."), searchBox()));
  try {
    const { namespaces } = await api.namespaces();
    for (const ns of namespaces) {
      // Each list a page at a time from the server.
      const datasets = await pagedTable({
        headers: ["name", "fields", "updated", ""], noun: "datasets", attrs: { "data-testid": `datasets-${ns.name}` },
        fetch: async (limit, offset) => {
          const page = await api.datasets(ns.name, limit, offset);
          return { totalCount: page.totalCount, rows: page.datasets.map((d) => [link(pageUrl.dataset(d.namespace, d.name), d.name), d.fields.length,
            formatTime(d.updatedAt), link(pageUrl.lineage(nodeIds.dataset(d.namespace, d.name)), "lineage", { "aria-label": `lineage of ${d.name}` })]) };
        },
      });
      const jobs = await pagedTable({
        headers: ["name", "last run", "state", ""], noun: "jobs", attrs: { "data-testid": `jobs-${ns.name}` },
        fetch: async (limit, offset) => {
          const page = await api.jobs(ns.name, limit, offset);
          return { totalCount: page.totalCount, rows: page.jobs.map((j) => [link(pageUrl.job(j.namespace, j.name), j.name), formatTime(j.latestRun?.startedAt),
            stateBadge(j.latestRun?.state), link(pageUrl.lineage(nodeIds.job(j.namespace, j.name)), "lineage", { "aria-label": `lineage of ${j.name}` })]) };
        },
      });
      const hasDatasets = datasets.querySelector("tbody")!.childElementCount > 0;
      const hasJobs = jobs.querySelector("tbody")!.childElementCount > 0;
      if (!hasDatasets && !hasJobs) continue;
      const card = section(`Namespace ${ns.name}`);
      if (hasDatasets) card.append(h("h3", {}, "Datasets"), datasets);
      if (hasJobs) card.append(h("h3", {}, "Jobs"), jobs);
      root.append(card);
    }
  } catch (error) {
    root.append(errorBox(error));
  }
}

/** The most search results fetched for the results page (shown a page at a time). */
const SEARCH_MAX = 2000;

export async function searchView(root: HTMLElement, url: URL): Promise<void> {
  const q = url.searchParams.get("q") ?? "";
  root.append(h("h1", {}, `Search: ${q}`), searchBox());
  if (!q) return;
  try {
    // The search answer has no offset: up to SEARCH_MAX results are fetched and shown a page at a time.
    const answer = await api.search(q, SEARCH_MAX);
    root.append(h("p", { class: "muted" }, answer.totalCount > answer.results.length
      ? `${answer.totalCount} result(s), the first ${answer.results.length} listed` : `${answer.totalCount} result(s)`),
    await pagedTable({ headers: ["kind", "name", "namespace", "updated", ""], noun: "results", attrs: { class: "search-results" },
      fetch: fromList(answer.results, (r) => [r.type.toLowerCase(),
        link(r.type === "JOB" ? pageUrl.job(r.namespace, r.name) : pageUrl.dataset(r.namespace, r.name), r.name),
        r.namespace, formatTime(r.updatedAt), link(pageUrl.lineage(r.nodeId), "lineage", { "aria-label": `lineage of ${r.name}` })]) }));
  } catch (error) {
    root.append(errorBox(error));
  }
}
