// The lineage explorer's side panel: what the clicked node is, and the buttons that grow,
// re-centre, fold or unfold the graph around it.
import { api, nodeIds, pageUrl, parseNodeId, runJobId, type Job, type JobNodeData, type Run, type RunNodeData, type V2Node } from "../api";
import { errorBox, fill, formatTime, h, link, stateBadge } from "../dom";
import { parentOf, shortName, type DrawEdge, type DrawNode } from "../graph/model";
import type { Expansion, ViewState } from "./lineage-state";
import { cached } from "./lineage-answers";

export interface PanelContext {
  panel: HTMLElement;
  state: ViewState;
  /** Every node of the answer, by id (drawn or not). */
  answer: Map<string, V2Node>;
  /** The drawn nodes and edges, by id. */
  drawn: Map<string, DrawNode>;
  edges: DrawEdge[];
  /** Drawn nodes with neighbours left out of a limited view. */
  frontier: Set<string>;
  /** Drawn nodes with neighbours the server's maxNodes cut left out of every answer. */
  truncated: Set<string>;
  /** Details of folded parents, fetched after the first draw. */
  parents: Map<string, Job | Run>;
  go: (next: Partial<ViewState>) => void;
  expand: (nodeId: string, direction: Expansion["direction"], depth: number) => void;
}

const button = (action: string, text: string, onclick: () => void) =>
  h("button", { type: "button", "data-action": action, onclick }, text);

/** The latest run of a job node, or the state and start of a run node, as one line. */
function runLine(node: V2Node | DrawNode | undefined, parent: Job | Run | undefined): HTMLElement | null {
  if (node?.type === "JOB") {
    const latest = (node.data as JobNodeData | null)?.latestRun ?? (parent as Job | undefined)?.latestRun;
    return latest ? h("p", {}, "last run ", stateBadge(latest.state), " ", formatTime(latest.startedAt),
      " ", link(pageUrl.run(latest.id), latest.id.slice(0, 8))) : null;
  }
  if (node?.type === "RUN") {
    const data = node.data as RunNodeData | null;
    const run = parent as Run | undefined;
    const state = data?.state ?? run?.state;
    const started = data?.startedAt ?? run?.startedAt;
    const job = runJobId(data) ?? (run?.jobVersion ? nodeIds.job(run.jobVersion.namespace, run.jobVersion.name) : null);
    return h("div", {},
      state ? h("p", {}, stateBadge(state), " started ", formatTime(started)) : null,
      job ? h("p", {}, "job ", link(pageUrl.forNode(job) ?? "/", parseNodeId(job).name)) : null);
  }
  return null;
}

export function showPanel(context: PanelContext, id: string): void {
  const { panel, state, go, expand } = context;
  const node = context.answer.get(id);
  const drawnNode = context.drawn.get(id);
  const parsed = parseNodeId(id);
  const page = pageUrl.forNode(id);
  const parent = node ? parentOf(node) : null;
  const members = drawnNode?.members ?? [];
  const childKind = drawnNode?.type === "RUN" ? "runs" : "jobs";
  fill(panel,
    h("h3", {}, parsed.field ? `${shortName(parsed.name)}.${parsed.field}` : shortName(parsed.name)),
    h("p", { class: "muted mono" }, id),
    page ? link(page, "open page") : null,
    node?.data?.version ? h("p", {}, "version ", h("span", { class: "mono" }, String(node.data.version))) : null,
    runLine(node ?? drawnNode, context.parents.get(id)),
    parent ? h("p", {}, `parent ${parsed.type} `, link(pageUrl.forNode(parent) ?? "/", parent.startsWith("run:")
      ? parseNodeId(parent).name.slice(0, 8) : shortName(parseNodeId(parent).name))) : null,
    context.frontier.has(id) ? h("p", { class: "muted", "data-testid": "frontier-note" },
      "Some of its neighbours are not drawn yet (the view is limited): expand to add them.") : null,
    context.truncated.has(id) ? h("p", { class: "warn", "data-testid": "truncated-note" },
      `The answer was cut at ${state.maxNodes.toLocaleString("en")} nodes: some of its neighbours are not in it. `,
      button("expand-truncated", "truncated — expand", () => expand(id, "both", 1))) : null,
    h("div", { class: "buttons" },
      button("expand-upstream", "◀ expand upstream", () => expand(id, "upstream", 1)),
      button("expand-downstream", "expand downstream ▶", () => expand(id, "downstream", 1)),
      button("expand-depth", `expand both to depth ${state.depth}`, () => expand(id, "both", state.depth)),
      button("recenter", "re-centre here", () => go({ nodeId: id, expansions: [], from: "", to: "", open: [], level: null })),
      button("path-from", "path from here", () => go({ from: id, selected: id })),
      button("path-to", "path to here", () => go({ to: id, selected: id })),
      members.length ? button("unfold", `unfold its ${members.length} child ${childKind}`,
        () => go({ open: [...state.open, id], selected: id })) : null,
      state.collapse && parent && state.open.includes(parent)
        ? button("fold", `fold back into its parent ${parsed.type}`, () => go({ open: state.open.filter((o) => o !== parent), selected: parent }))
        : null),
    members.length ? h("div", {}, h("h4", {}, `Collapsed child ${childKind}`),
      h("ul", { "data-testid": "members" }, members.map((m) => h("li", {}, link(pageUrl.forNode(m) ?? "/",
        m.startsWith("run:") ? memberRunLabel(context.answer.get(m)) : shortName(parseNodeId(m).name)))))) : null,
  );
  if (parsed.type === "dataset") void fieldList(panel, parsed.namespace, parsed.name);
  if (parsed.type === "datasetField") {
    const incoming = context.edges.filter((e) => e.downstream === id);
    if (incoming.length) {
      panel.append(h("h4", {}, "Derived from"), h("ul", { class: "derived" }, incoming.map((e) =>
        h("li", {}, `${shortName(parseNodeId(e.upstream).name)}.${parseNodeId(e.upstream).field} — ${e.label || "?"}`,
          e.via ? h("span", { class: "muted" }, ` via ${shortName(parseNodeId(e.via).name)}`) : null))));
    }
  }
}

function memberRunLabel(node: V2Node | undefined): string {
  const data = node?.data as RunNodeData | null | undefined;
  const jobId = runJobId(data);
  const job = jobId ? shortName(parseNodeId(jobId).name) : "run";
  return `${job} · ${(data?.runId ?? "").slice(0, 8)}`;
}

/** A dataset's columns in the side panel, each a link to its column lineage. */
async function fieldList(panel: HTMLElement, namespace: string, name: string): Promise<void> {
  try {
    const dataset = await cached(`dataset ${namespace} ${name}`, () => api.dataset(namespace, name));
    panel.append(h("h4", {}, "Columns"), h("ul", { class: "fields" }, dataset.fields.map((f) =>
      h("li", {}, link(pageUrl.lineage(nodeIds.field(namespace, name, f.name), { direction: "both", depth: "5" }), f.name,
        { "data-field": f.name }), h("span", { class: "muted" }, ` ${f.type ?? ""}`)))));
  } catch (error) {
    panel.append(errorBox(error));
  }
}
