// The home page (every namespace's datasets and jobs) and the search results page.
import { api, nodeIds, pageUrl } from "../api";
import { errorBox, formatTime, h, link, section, stateBadge, table } from "../dom";
import { searchBox } from "../search-box";

export async function homeView(root: HTMLElement): Promise<void> {
  root.append(h("div", { class: "hero" }, h("h1", {}, "Lineage"), h("p", { class: "muted" },
    "Start from any dataset or job: search, or pick one below."), searchBox()));
  try {
    const { namespaces } = await api.namespaces();
    for (const ns of namespaces) {
      const [datasets, jobs] = await Promise.all([api.datasets(ns.name, 200), api.jobs(ns.name, 200)]);
      if (!datasets.datasets.length && !jobs.jobs.length) continue;
      const card = section(`Namespace ${ns.name}`);
      if (datasets.datasets.length) {
        card.append(h("h3", {}, `Datasets (${datasets.totalCount})`), table(["name", "fields", "updated", ""],
          datasets.datasets.map((d) => [link(pageUrl.dataset(d.namespace, d.name), d.name), d.fields.length,
            formatTime(d.updatedAt), link(pageUrl.lineage(nodeIds.dataset(d.namespace, d.name)), "lineage")])));
      }
      if (jobs.jobs.length) {
        card.append(h("h3", {}, `Jobs (${jobs.totalCount})`), table(["name", "last run", "state", ""],
          jobs.jobs.map((j) => [link(pageUrl.job(j.namespace, j.name), j.name), formatTime(j.latestRun?.startedAt),
            stateBadge(j.latestRun?.state), link(pageUrl.lineage(nodeIds.job(j.namespace, j.name)), "lineage")])));
      }
      root.append(card);
    }
  } catch (error) {
    root.append(errorBox(error));
  }
}

export async function searchView(root: HTMLElement, url: URL): Promise<void> {
  const q = url.searchParams.get("q") ?? "";
  root.append(h("h1", {}, `Search: ${q}`), searchBox());
  if (!q) return;
  try {
    const answer = await api.search(q, 200);
    root.append(h("p", { class: "muted" }, `${answer.totalCount} result(s)`), table(["kind", "name", "namespace", "updated", ""],
      answer.results.map((r) => [r.type.toLowerCase(),
        link(r.type === "JOB" ? pageUrl.job(r.namespace, r.name) : pageUrl.dataset(r.namespace, r.name), r.name),
        r.namespace, formatTime(r.updatedAt), link(pageUrl.lineage(r.nodeId), "lineage")]), { class: "search-results" }));
  } catch (error) {
    root.append(errorBox(error));
  }
}
