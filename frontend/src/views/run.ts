// The run page: state and times, input and output dataset versions, parent and child runs,
// the error message of a failed run, and its facets.
import { api, nodeIds, pageUrl, type Run } from "../api";
import { add, errorBox, facetList, formatDuration, formatTime, h, link, section, stateBadge, table } from "../dom";

const versionRows = (items: Run["inputDatasetVersions"]) =>
  items.map(({ datasetVersionId: v }) => [
    link(pageUrl.dataset(v.namespace, v.name), v.name), h("span", { class: "mono" }, v.version.slice(0, 8)),
  ]);

export async function runView(root: HTMLElement, id: string): Promise<void> {
  let run: Run;
  try {
    run = await api.run(id);
  } catch (error) {
    root.append(errorBox(error));
    return;
  }
  const job = run.jobVersion;
  const parent = run.facets?.parent;
  const error = run.facets?.errorMessage;
  add(root,
    h("div", { class: "page-head" }, h("span", { class: "kind kind-run" }, "run"), h("h1", { class: "mono" }, id),
      h("p", {}, stateBadge(run.state), ` started ${formatTime(run.startedAt)} · ended ${formatTime(run.endedAt)} · ${formatDuration(run.durationMs)}`),
      job ? h("p", {}, "job ", link(pageUrl.job(job.namespace, job.name), job.name)) : null,
      link(pageUrl.lineage(nodeIds.run(id)), "view run lineage", { class: "button" })),
    error ? section("Error", h("pre", { class: "error-message", "data-testid": "error-message" }, String(error.message ?? "")),
      error.stackTrace ? h("details", {}, h("summary", {}, "stack trace"), h("pre", {}, String(error.stackTrace))) : null) : null,
    h("div", { class: "columns" },
      section("Inputs (dataset versions read)", table(["dataset", "version"], versionRows(run.inputDatasetVersions), { "data-testid": "inputs" })),
      section("Outputs (dataset versions written)", table(["dataset", "version"], versionRows(run.outputDatasetVersions), { "data-testid": "outputs" }))),
  );
  const family = section("Parent and child runs",
    parent?.run?.runId ? h("p", {}, "parent run ", link(pageUrl.run(parent.run.runId), parent.run.runId.slice(0, 8)),
      parent.job ? ` of job ${parent.job.name}` : "") : h("p", { class: "muted" }, "No parent run."));
  root.append(family, section("Facets", facetList(run.facets)));
  if (job) await childRuns(family, run, job.namespace, job.name);
}

/**
 * Child runs name this run in their parent facet. The API has no children query yet, so the
 * page looks at the runs of the jobs whose latest run names this job as parent.
 */
async function childRuns(into: HTMLElement, run: Run, namespace: string, jobName: string): Promise<void> {
  try {
    const { jobs } = await api.jobs(namespace);
    const childJobs = jobs.filter((j) => j.latestRun?.facets?.parent?.job?.name === jobName || j.parentJobName === jobName);
    const lists = await Promise.all(childJobs.map((j) => api.jobRuns(j.namespace, j.name, 100).then(({ runs }) => runs.map((r) => ({ job: j.name, run: r })))));
    const children = lists.flat().filter(({ run: r }) => r.facets?.parent?.run?.runId === run.id);
    children.sort((x, y) => (x.run.startedAt ?? "").localeCompare(y.run.startedAt ?? ""));
    into.append(children.length
      ? table(["child run", "job", "state", "started", "duration"], children.map(({ job, run: r }) => [
        link(pageUrl.run(r.id), r.id.slice(0, 8)), job, stateBadge(r.state), formatTime(r.startedAt), formatDuration(r.durationMs),
      ]), { "data-testid": "children" })
      : h("p", { class: "muted" }, "No child runs."));
  } catch (error) {
    into.append(errorBox(error));
  }
}
