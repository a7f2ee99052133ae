// The job page's "Same work elsewhere": the jobs whose output columns are computed the way
// this job's are (GET /api/v2/duplicates?job=), with how much of each output they share.
import { getJson, pageUrl, parseNodeId } from "../api";
import { h, link, section, table } from "../dom";

interface Side { job: string; columns: number; sameColumns: number; sameValues: number; matches: { column: string; other: string; match: string }[] }
interface Duplicate { relation: "equal" | "contains" | "partial"; contained: string | null; score: number; jobs: Side[] }

const RELATIONS = {
  equal: "computes the same columns",
  contains: "one computes all of the other's columns",
  partial: "computes some of the same columns, or the same values over other rows",
};

function column(id: string): string {
  const node = parseNodeId(id.replace(/^dataset:/, "datasetField:"));
  return `${node.name}.${node.field}`;
}

/** The section, or null when the job has no such pair (or the server cannot say). */
export async function duplicatesSection(jobId: string): Promise<HTMLElement | null> {
  let answer: { duplicates: Duplicate[] };
  try {
    answer = await getJson(`/api/v2/duplicates`, { job: jobId, minShare: 0.5 });
  } catch {
    return null;
  }
  if (!answer.duplicates.length) return null;
  return section("Same work elsewhere",
    h("div", { "data-testid": "duplicates" },
      table(["other job", "relation", "this job's columns", "the other's columns", "columns matched"], answer.duplicates.map((d) => {
        const mine = d.jobs.find((s) => s.job === jobId) ?? d.jobs[0];
        const other = d.jobs.find((s) => s !== mine) ?? d.jobs[1];
        const o = parseNodeId(other.job);
        return [
          link(pageUrl.job(o.namespace, o.name), o.name, { title: other.job }),
          h("span", { "data-relation": d.relation, title: RELATIONS[d.relation] }, d.relation),
          `${mine.sameColumns}/${mine.columns} exact · ${mine.sameValues}/${mine.columns} same values`,
          `${other.sameColumns}/${other.columns} exact · ${other.sameValues}/${other.columns} same values`,
          h("ul", {}, mine.matches.map((m) => h("li", { class: "mono" }, `${column(m.column)} = ${column(m.other)}${m.match === "values" ? " (other rows)" : ""}`))),
        ];
      }), { "data-testid": "duplicates-list" })));
}
