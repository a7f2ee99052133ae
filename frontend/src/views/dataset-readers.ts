// The dataset page's "Who read it" (GET /api/v2/datasets/{id}/readers): the runs that read
// the dataset, newest read first, with their job, state, Spark user and whether they only
// read (a collect or toPandas the agent captured), for the question lineage alone does not
// answer: who looked at this data?
import { getJson, pageUrl, parseNodeId } from "../api";
import { formatTime, h, link, section, stateBadge } from "../dom";
import { pagedTable } from "../pager";
import { runIdLink } from "../run-ids";

interface Reader {
  runId: string; job: string; readAt: string; state: string | null;
  sparkUser: string | null; readOnly: boolean;
}
interface ReaderList { totalCount: number; users: string[]; jobs: string[]; readers: Reader[] }

/** The section, or null when no run read the dataset (or the server has no such route). */
export async function readersSection(datasetId: string): Promise<HTMLElement | null> {
  const path = `/api/v2/datasets/${encodeURIComponent(datasetId)}/readers`;
  try {
    const first = await getJson<ReaderList>(path, { limit: 1 });
    if (!first.totalCount) return null;
  } catch {
    return null;
  }
  const list = await pagedTable({
    headers: ["read at", "job", "run", "state", "Spark user", "wrote"], noun: "reads", pageSize: 20,
    attrs: { "data-testid": "readers" },
    fetch: async (limit, offset) => {
      const page = await getJson<ReaderList>(path, { limit, offset });
      return { totalCount: page.totalCount, rows: page.readers.map((r) => {
        const job = parseNodeId(r.job);
        return [formatTime(r.readAt), link(pageUrl.job(job.namespace, job.name), job.name, { title: r.job }),
          runIdLink(pageUrl.run(r.runId), r.runId), stateBadge(r.state),
          h("span", { "data-testid": "spark-user" }, r.sparkUser ?? "—"),
          r.readOnly ? h("span", { class: "read-only", "data-read-only": "true" }, "nothing (read only)") : "outputs"];
      }) };
    },
  });
  return section("Who read it",
    h("p", { class: "muted" }, "Runs that read this dataset, newest first; a run that wrote nothing is a read-only action such as collect or toPandas."),
    list);
}
