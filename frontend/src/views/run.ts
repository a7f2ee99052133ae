// The run page: state and times (and a STALE mark when /api/v2/runs/{id} says the run's
// producer beats a heartbeat and went silent), input and output dataset versions, parent and child runs
// (listed from /api/v1/jobs/runs/{id}/children, a page at a time), the error message of a
// failed run, its lineage graph (the explorer's, embedded: for an application's or an
// orchestrator's run, which read and write nothing themselves, the lineage of the runs under
// it), and its facets.
import { api, nodeIds, pageUrl, type Run, type RunLiveness } from "../api";
import { lineageView } from "./lineage";
import { pagedTable } from "../pager";
import { runIdLink } from "../run-ids";
import { add, errorBox, facetList, formatDuration, formatTime, h, link, section, stateBadge, table } from "../dom";

const versionRows = (items: Run["inputDatasetVersions"]) =>
  items.map(({ datasetVersionId: v }) => [
    link(pageUrl.dataset(v.namespace, v.name), v.name), h("span", { class: "mono" }, v.version.slice(0, 8)),
  ]);

export async function runView(root: HTMLElement, url: URL, id: string): Promise<void> {
  let run: Run;
  // The liveness read is extra: an answer without it still shows the run.
  const liveness = api.runLiveness(id).catch(() => null);
  try {
    run = await api.run(id);
  } catch (error) {
    root.append(errorBox(error));
    return;
  }
  const live: RunLiveness | null = await liveness;
  const stale = live?.stale && live.heartbeat
    ? h("span", {
        class: "state state-stale", "data-testid": "stale",
        title: `No event received since ${formatTime(live.lastEventAt)} (stale after ${live.heartbeat.staleAfterSeconds} s of silence); the run is not ended`,
      }, "STALE")
    : null;
  const job = run.jobVersion;
  const parent = run.facets?.parent;
  const error = run.facets?.errorMessage;
  add(root,
    h("div", { class: "page-head" }, h("span", { class: "kind kind-run" }, "run"), h("h1", { class: "mono" }, id),
      h("p", {}, stateBadge(run.state), stale ? " " : "", stale, ` started ${formatTime(run.startedAt)} · ended ${formatTime(run.endedAt)} · ${formatDuration(run.durationMs)}`),
      job ? h("p", {}, "job ", link(pageUrl.job(job.namespace, job.name), job.name)) : null,
      link(pageUrl.lineage(nodeIds.run(id)), "view run lineage", { class: "button" }), " ",
      link(pageUrl.lineage(nodeIds.run(id), { collapse: "1" }), "… with child runs collapsed", { class: "button" })),
    error ? section("Error", h("pre", { class: "error-message", "data-testid": "error-message" }, String(error.message ?? "")),
      error.stackTrace ? h("details", {}, h("summary", {}, "stack trace"), h("pre", {}, String(error.stackTrace))) : null) : null,
    h("div", { class: "columns" },
      section("Inputs (dataset versions read)", table(["dataset", "version"], versionRows(run.inputDatasetVersions), { "data-testid": "inputs" })),
      section("Outputs (dataset versions written)", table(["dataset", "version"], versionRows(run.outputDatasetVersions), { "data-testid": "outputs" }))),
  );
  const family = section("Parent and child runs",
    parent?.run?.runId ? h("p", {}, "parent run ", runIdLink(pageUrl.run(parent.run.runId), parent.run.runId),
      parent.job ? ` of job ${parent.job.name}` : "") : h("p", { class: "muted" }, "No parent run."));
  const graph = h("section", { class: "card", "data-testid": "run-lineage" });
  root.append(graph, family, section("Facets", facetList(run.facets)));
  const pageSize = Number(url.searchParams.get("childLimit")) || CHILD_PAGE;
  await Promise.all([
    childRuns(family, id, Math.min(Math.max(1, Math.floor(pageSize)), 1000)),
    lineageView(graph, new URL(pageUrl.lineage(nodeIds.run(id), { depth: String(GRAPH_DEPTH) }), window.location.origin),
      { heading: "Lineage" }),
  ]);
}

/** The embedded graph's depth: the run, what it read and wrote, and the runs on the other side. */
const GRAPH_DEPTH = 2;

/** How many child runs the page lists at a time (`?childLimit=` overrides); "show more" asks for the next page. */
const CHILD_PAGE = 100;

/** The runs whose parent facet names this run (a Spark application's per-action runs), a page at a time. */
async function childRuns(into: HTMLElement, id: string, pageSize: number): Promise<void> {
  const count = h("p", { class: "muted", "data-testid": "children-count" });
  into.append(count);
  try {
    const list = await pagedTable({
      headers: ["child run", "job", "state", "started", "duration"], noun: "child runs", pageSize, attrs: { "data-testid": "children" },
      fetch: async (limit, offset) => {
        const { runs, totalCount } = await api.runChildren(id, limit, offset);
        count.textContent = totalCount ? `${totalCount} child run(s)` : "No child runs.";
        return { totalCount, rows: runs.map((r) => [runIdLink(pageUrl.run(r.id), r.id),
          link(pageUrl.job(r.job.namespace, r.job.name), r.job.name), stateBadge(r.state), formatTime(r.startedAt), formatDuration(r.durationMs)]) };
      },
    });
    if (count.textContent !== "No child runs.") into.append(list);
  } catch (error) {
    into.append(errorBox(error));
  }
}
