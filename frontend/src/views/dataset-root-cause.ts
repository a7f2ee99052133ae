// The dataset page's "What changed upstream": the drifts, failed runs and quality
// failures of the datasets and jobs it is derived from in the last 7 days, oldest first,
// each with its path to this dataset (GET /api/v2/datasets/{id}/root-cause).
import { getJson, pageUrl, parseNodeId } from "../api";
import { formatTime, h, link, section, table } from "../dom";

interface Cause {
  kind: "versionDrift" | "contractDrift" | "failedRun" | "qualityFailure";
  time: string;
  subject: string;
  consumer: string | null;
  depth: number;
  path: string[];
  detail: Record<string, any>;
}
interface RootCause { since: string; until: string; upstreamDatasets: number; upstreamJobs: number; truncated: boolean; totalCount: number; causes: Cause[] }

const KINDS: Record<Cause["kind"], string> = {
  versionDrift: "schema drift",
  contractDrift: "contract drift",
  failedRun: "failed run",
  qualityFailure: "quality failure",
};

/** A link to a dataset's or job's page, named by its name alone. */
function nodeLink(id: string): HTMLElement {
  const node = parseNodeId(id);
  const href = node.type === "job" ? pageUrl.job(node.namespace, node.name) : pageUrl.dataset(node.namespace, node.name);
  return link(href, node.name, { title: id });
}

function what(cause: Cause): HTMLElement | string {
  const d = cause.detail;
  if (cause.kind === "failedRun") return link(pageUrl.run(d.runId), `run ${String(d.runId).slice(0, 8)}`, { title: d.runId });
  if (cause.kind === "qualityFailure") {
    return (d.failed as { assertion: string; column: string | null }[]).map((a) => (a.column ? `${a.assertion}(${a.column})` : a.assertion)).join(", ");
  }
  const changes = (d.changes as { kind: string; path: string; old?: string | null; new?: string | null }[])
    .map((c) => `${c.kind} ${c.path}${c.old ? ` ${c.old} → ${c.new}` : ""}`).join("; ");
  const consumer = cause.consumer ? ` (declared by ${parseNodeId(cause.consumer).name})` : "";
  return h("span", { class: d.breaking ? "quality-fail-text" : "" }, `${d.breaking ? "breaking: " : ""}${changes}${consumer}`);
}

/** The path from the cause down to this dataset: names joined by arrows, each a link. */
function path(ids: string[]): HTMLElement {
  return h("span", { class: "root-cause-path" }, ids.flatMap((id, i) => (i ? [" → ", nodeLink(id)] : [nodeLink(id)])));
}

/** The section, or null when the server cannot answer (an older server). */
export async function rootCauseSection(datasetId: string): Promise<HTMLElement | null> {
  let answer: RootCause;
  try {
    answer = await getJson<RootCause>(`/api/v2/datasets/${encodeURIComponent(datasetId)}/root-cause`);
  } catch {
    return null;
  }
  const head = `Drifts, failed runs and quality failures upstream from ${formatTime(answer.since)} to ${formatTime(answer.until)}`
    + ` (${answer.upstreamDatasets} datasets, ${answer.upstreamJobs} jobs walked${answer.truncated ? ", cut short" : ""}), oldest first.`;
  return section("What changed upstream",
    h("div", { "data-testid": "root-cause" },
      h("p", { class: "muted" }, head),
      answer.causes.length
        ? table(["time", "what happened", "to", "detail", "path to this dataset"], answer.causes.map((c) => [
          formatTime(c.time),
          h("span", { "data-kind": c.kind }, KINDS[c.kind]),
          nodeLink(c.subject),
          what(c),
          path(c.path),
        ]), { "data-testid": "root-cause-list" })
        : h("p", { "data-testid": "root-cause-none" }, "Nothing changed upstream in this window.")));
}
