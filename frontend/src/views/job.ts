// The job page: runs with state, duration, start and end; SQL when present; inputs/outputs.
import { api, nodeIds, pageUrl, type DatasetId } from "../api";
import { add, errorBox, facetList, formatDuration, formatTime, h, link, section, stateBadge } from "../dom";
import { pagedTable } from "../pager";
import { runIdLink } from "../run-ids";
import { duplicatesSection } from "./job-duplicates";

const datasetLinks = (items: DatasetId[]) =>
  items.length ? h("ul", {}, items.map((d) => h("li", {}, link(pageUrl.dataset(d.namespace, d.name), d.name)))) : h("p", { class: "muted" }, "None.");

export async function jobView(root: HTMLElement, namespace: string, name: string): Promise<void> {
  try {
    // Runs a page at a time, newest first.
    const [job, runs] = await Promise.all([api.job(namespace, name), pagedTable({
      headers: ["run", "state", "started", "ended", "duration"], noun: "runs", attrs: { "data-testid": "runs" },
      fetch: async (limit, offset) => {
        const page = await api.jobRuns(namespace, name, limit, offset);
        return { totalCount: page.totalCount, rows: page.runs.map((r) => [
          runIdLink(pageUrl.run(r.id), r.id), stateBadge(r.state), formatTime(r.startedAt), formatTime(r.endedAt), formatDuration(r.durationMs),
        ]) };
      },
    })]);
    // The parent job (a Spark application's job for its per-action jobs): the latest run's
    // parent facet names its namespace too; parentJobName (Marquez's field) only its name.
    const parent = job.latestRun?.facets?.parent?.job ?? (job.parentJobName ? { namespace, name: job.parentJobName } : null);
    const sql: string | undefined = job.facets?.sql?.query;
    add(root,
      h("div", { class: "page-head" }, h("span", { class: "kind kind-job" }, "job"), h("h1", {}, name),
        h("p", { class: "muted" }, `namespace ${namespace} · type ${job.type} · updated ${formatTime(job.updatedAt)}`),
        parent ? h("p", {}, "parent job ", link(pageUrl.job(parent.namespace, parent.name), parent.name)) : null,
        link(pageUrl.lineage(nodeIds.job(namespace, name)), "view lineage", { class: "button" })),
      job.description ? h("p", {}, job.description) : null,
      h("div", { class: "columns" }, section("Inputs", datasetLinks(job.inputs)), section("Outputs", datasetLinks(job.outputs))),
      section("Runs", runs),
      await duplicatesSection(nodeIds.job(namespace, name)),
      sql ? section("SQL", h("pre", { class: "sql", "data-testid": "sql" }, sql)) : null,
      section("Facets", facetList(job.facets)),
    );
  } catch (error) {
    root.append(errorBox(error));
  }
}
