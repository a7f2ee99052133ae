// Schema drift with its impact (GET /api/v2/drift): the /drift page lists every dataset's
// drifts, the dataset page its own. Each drift shows its changes, the consumer job of a
// contract drift, and what it reaches downstream -- every column, dataset and job, direct
// or indirect, with the path through each job -- as lineage stood when it changed.
import { getJson, pageUrl, parseNodeId } from "../api";
import { formatTime, h, link, section } from "../dom";
import { pagedTable } from "../pager";
import { navigate } from "../router";

interface Change { kind: string; path: string; newPath: string | null; old: string | null; new: string | null; breaking: boolean }
interface Impacted { id: string; type: "DATASET" | "DATASET_FIELD" | "JOB"; depth: number; impact: "direct" | "indirect"; path: string[]; pathEdges: string[] }
export interface Drift {
  id: string;
  kind: "version" | "contract";
  datasetId: string;
  changedAt: string;
  breaking: boolean;
  changes: Change[];
  consumer: { jobId: string; name: string } | null;
  impact: {
    asOf: string; truncated: boolean; maxNodes: number; nodes: Impacted[];
    summary: { datasets: number; columns: number; jobs: number; direct: number; indirect: number };
  } | null;
}
interface DriftList { totalCount: number; drifts: Drift[] }

/** A link to a node's page named by its short name (a column as dataset.column). */
function nodeLink(id: string): HTMLElement {
  const node = parseNodeId(id);
  const text = node.type === "datasetField" ? `${node.name}.${node.field}` : node.name;
  return link(pageUrl.forNode(id) ?? "#", text, { title: id, class: `node-link node-${node.type}` });
}

function changeText(change: Change): string {
  const renamed = change.newPath ? ` → ${change.newPath}` : "";
  const types = change.old || change.new ? ` (${change.old ?? "—"} → ${change.new ?? "—"})` : "";
  return `${change.kind} ${change.path}${renamed}${types}`;
}

/** The path from the changed column to the node: each job with the kind of its edge. */
function pathCell(node: Impacted): HTMLElement {
  const kinds = [...node.pathEdges];
  const parts: (HTMLElement | string)[] = [];
  node.path.forEach((id, i) => {
    if (i) parts.push(" → ");
    parts.push(nodeLink(id));
    if (id.startsWith("job:") && kinds.length) parts.push(h("span", { class: "edge-kind" }, ` [${kinds.shift()}]`));
  });
  return h("span", { class: "impact-path", "data-testid": "impact-path" }, parts);
}

/** The drift's impact: a one-line summary and, folded, every node it reaches. */
function impactCell(drift: Drift): HTMLElement | string {
  const impact = drift.impact;
  if (!impact) return "—";
  const s = impact.summary;
  const head = impact.nodes.length
    ? `reaches ${s.columns} columns, ${s.datasets} datasets, ${s.jobs} jobs (${s.direct} direct, ${s.indirect} indirect)`
    : "reaches nothing downstream";
  if (!impact.nodes.length) return h("span", { class: "muted" }, head);
  const rows = impact.nodes.map((n) => h("tr", { "data-impacted": n.id, "data-impact": n.impact },
    h("td", {}, nodeLink(n.id)), h("td", {}, n.type === "DATASET_FIELD" ? "column" : n.type.toLowerCase()),
    h("td", {}, String(n.depth)), h("td", { class: `impact-${n.impact}` }, n.impact), h("td", {}, pathCell(n))));
  return h("details", { class: "drift-impact", "data-testid": "drift-impact" },
    h("summary", {}, head + (impact.truncated ? ` — cut at ${impact.maxNodes} nodes` : "")),
    h("p", { class: "muted" }, `Lineage as of ${formatTime(impact.asOf)}.`),
    h("table", { class: "impact-table" },
      h("thead", {}, h("tr", {}, ["node", "type", "jobs away", "impact", "path"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows)));
}

function kindCell(drift: Drift): (HTMLElement | string)[] {
  if (drift.kind === "contract" && drift.consumer) {
    return [h("span", { "data-kind": "contract" }, "contract: "), "read by ",
      h("span", { "data-testid": "consumer" }, nodeLink(drift.consumer.jobId)), " as declared"];
  }
  return [h("span", { "data-kind": "version" }, "schema change")];
}

function row(drift: Drift, withDataset: boolean): (HTMLElement | string | (HTMLElement | string)[])[] {
  const cells: (HTMLElement | string | (HTMLElement | string)[])[] = [formatTime(drift.changedAt)];
  if (withDataset) cells.push(nodeLink(drift.datasetId));
  cells.push(kindCell(drift),
    h("span", { class: drift.breaking ? "quality-fail-text" : "", "data-breaking": String(drift.breaking) }, drift.breaking ? "breaking" : "compatible"),
    h("ul", { class: "drift-changes" }, drift.changes.map((c) => h("li", { class: c.breaking ? "quality-fail-text" : "" }, changeText(c)))),
    impactCell(drift));
  return cells;
}

/** A paged table of drifts; `params` filters them (dataset, breaking, kind). */
async function driftTable(params: Record<string, string>, withDataset: boolean): Promise<HTMLElement> {
  const headers = ["changed at", ...(withDataset ? ["dataset"] : []), "kind", "class", "changes", "impact"];
  return pagedTable({
    headers, noun: "drifts", pageSize: 20, attrs: { "data-testid": "drifts", class: "drift-table" },
    fetch: async (limit, offset) => {
      const page = await getJson<DriftList>("/api/v2/drift", { ...params, limit, offset, maxNodes: 200 });
      return { totalCount: page.totalCount, rows: page.drifts.map((d) => row(d, withDataset)) };
    },
  });
}

/** The dataset page's section, or null when the dataset has no drift (or the server none). */
export async function driftSection(datasetId: string): Promise<HTMLElement | null> {
  try {
    const first = await getJson<DriftList>("/api/v2/drift", { dataset: datasetId, limit: 1, impact: false });
    if (!first.totalCount) return null;
  } catch {
    return null;
  }
  return section("Schema drift",
    h("p", { class: "muted" }, "Changes of this dataset's schema between versions, and consumers declaring a schema it is not written with; each with what it reaches downstream. ",
      link(`/drift?${new URLSearchParams({ dataset: datasetId })}`, "all drifts")),
    await driftTable({ dataset: datasetId }, false));
}

/** /drift?breaking=true&kind=contract&dataset=...: the drift feed. */
export async function driftView(root: HTMLElement, url: URL): Promise<void> {
  const params: Record<string, string> = {};
  for (const key of ["breaking", "kind", "dataset", "since"]) {
    const value = url.searchParams.get(key);
    if (value) params[key] = value;
  }
  const toggle = (key: string, value: string | null) => {
    const next = new URLSearchParams(url.search);
    if (value === null) next.delete(key); else next.set(key, value);
    navigate(`${url.pathname}?${next}`);
  };
  const kind = h("select", { "aria-label": "kind of drift", "data-testid": "drift-kind",
    onchange: (e: Event) => toggle("kind", (e.target as HTMLSelectElement).value || null) },
  [["", "every kind"], ["version", "schema changes"], ["contract", "contract drifts"]].map(([value, text]) =>
    h("option", { value, selected: (params.kind ?? "") === value }, text)));
  const breaking = h("input", { type: "checkbox", id: "drift-breaking", "data-testid": "drift-breaking", checked: params.breaking === "true",
    onchange: (e: Event) => toggle("breaking", (e.target as HTMLInputElement).checked ? "true" : null) });
  root.append(
    h("div", { class: "page-head" }, h("h1", {}, "Schema drift")),
    h("p", { class: "muted" }, "Every dataset's schema changes and contract drifts, newest first, with the columns, datasets and jobs each reaches."),
    h("p", { class: "filters" }, kind, " ", breaking, h("label", { for: "drift-breaking" }, " breaking only"),
      params.dataset ? [" · dataset ", nodeLink(params.dataset), " ", link(url.pathname, "(all datasets)")] : null),
    await driftTable(params, true));
}
