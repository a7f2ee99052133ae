// The lineage explorer: a directed left-to-right graph around one node, expandable one hop
// at a time, with path highlighting and child jobs collapsible under their parent job.
// The whole view state lives in the URL:
//   /lineage?nodeId=…&direction=both&depth=2&maxNodes=1000&asOf=…
//            &x=up:1:<node id>   (an expansion: direction, depth, node; repeatable)
//            &from=<id>&to=<id>  (highlight the path between two nodes)
//            &collapse=1         (fold child jobs into their parent job)
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";

import { api, nodeIds, pageUrl, parseNodeId, type Job, type V2Graph } from "../api";
import { errorBox, fill, formatTime, h, link, stateBadge } from "../dom";
import { drawable, LineageModel, pathBetween, shortName, type DrawEdge, type DrawNode } from "../graph/model";
import { layered } from "../graph/layered";
import { STATE_COLOURS, stylesheet } from "../graph/style";

cytoscape.use(dagre);

/** Above this many nodes the graph is drawn in its cheaper mode (straight edges, fast ranking). */
const LARGE = 300;
/** Up to this many nodes dagre lays the graph out; above, the fast layered layout does. */
const DAGRE_MAX = 150;
/** dagre's rankers; `?ranker=` overrides the choice (the draw benchmark compares them). */
const RANKERS = new Set(["network-simplex", "tight-tree", "longest-path"]);

interface Expansion {
  direction: "upstream" | "downstream" | "both";
  depth: number;
  nodeId: string;
}

interface ViewState {
  nodeId: string;
  direction: string;
  depth: number;
  maxNodes: number;
  asOf: string;
  expansions: Expansion[];
  from: string;
  to: string;
  collapse: boolean;
  /** The node whose details the side panel shows. */
  selected: string;
}

function readState(url: URL): ViewState {
  const p = url.searchParams;
  return {
    nodeId: p.get("nodeId") ?? "",
    direction: p.get("direction") ?? "both",
    depth: Number(p.get("depth") ?? 4),
    maxNodes: Number(p.get("maxNodes") ?? 1000),
    asOf: p.get("asOf") ?? "",
    expansions: p.getAll("x").flatMap((value) => {
      const [direction, depth, ...rest] = value.split(":");
      if (!["upstream", "downstream", "both"].includes(direction)) return [];
      return [{ direction: direction as Expansion["direction"], depth: Number(depth) || 1, nodeId: rest.join(":") }];
    }),
    from: p.get("from") ?? "",
    to: p.get("to") ?? "",
    collapse: p.get("collapse") === "1",
    selected: p.get("selected") ?? "",
  };
}

function writeState(state: ViewState): string {
  const p = new URLSearchParams({ nodeId: state.nodeId, direction: state.direction, depth: String(state.depth) });
  if (state.maxNodes !== 1000) p.set("maxNodes", String(state.maxNodes));
  if (state.asOf) p.set("asOf", state.asOf);
  for (const x of state.expansions) p.append("x", `${x.direction}:${x.depth}:${x.nodeId}`);
  if (state.from) p.set("from", state.from);
  if (state.to) p.set("to", state.to);
  if (state.collapse) p.set("collapse", "1");
  if (state.selected) p.set("selected", state.selected);
  return `/lineage?${p}`;
}

// Job details (latest run, parent job) per namespace, reused for a short while so that
// expanding or re-centring does not refetch them, yet new runs show up soon.
const JOBS_TTL_MS = 30_000;
const jobsByNamespace = new Map<string, { at: number; jobs: Promise<Map<string, Job>> }>();

function jobsOf(namespace: string): Promise<Map<string, Job>> {
  const known = jobsByNamespace.get(namespace);
  if (known && performance.now() - known.at < JOBS_TTL_MS) return known.jobs;
  const jobs = api.jobs(namespace).then(({ jobs }) => new Map(jobs.map((job) => [nodeIds.job(job.namespace, job.name), job])));
  jobsByNamespace.set(namespace, { at: performance.now(), jobs });
  return jobs;
}

/** A job's parent job, from its parent facet (the run model: one child job per action). */
function parentJobId(job: Job): string | null {
  const parent = job.latestRun?.facets?.parent?.job;
  if (parent?.namespace && parent?.name) return nodeIds.job(parent.namespace, parent.name);
  return job.parentJobName ? nodeIds.job(job.namespace, job.parentJobName) : null;
}

function nodeLabel(node: DrawNode, jobs: Map<string, Job>, grouped = false): string {
  const parsed = parseNodeId(node.id);
  if (node.type === "DATASET_FIELD") return grouped ? (parsed.field ?? node.id) : `${shortName(parsed.name)}.${parsed.field}`;
  if (node.type === "RUN") return `run ${parsed.name.slice(0, 8)}`;
  if (node.type === "JOB") {
    const job = jobs.get(node.id);
    const when = job?.latestRun?.startedAt ? formatTime(job.latestRun.startedAt).slice(0, 16) : "";
    const folded = node.members.length ? ` (+${node.members.length} jobs)` : "";
    return `${shortName(parsed.name)}${folded}${when ? `\n${when}` : ""}`;
  }
  return shortName(parsed.name);
}

// The drawn graph of the previous render, released when the view is drawn again.
let previous: cytoscape.Core | null = null;

export async function lineageView(root: HTMLElement, url: URL): Promise<void> {
  previous?.destroy();
  previous = null;
  const state = readState(url);
  if (!state.nodeId) {
    root.append(errorBox("Choose a dataset or job to explore (nodeId is missing)."));
    return;
  }
  const rootParsed = parseNodeId(state.nodeId);
  const columnView = rootParsed.type === "datasetField";
  const status = h("span", { class: "status", "data-testid": "graph-status" }, "loading…");
  const canvas = h("div", { class: "graph-canvas", "data-testid": "graph" });
  const panel = h("aside", { class: "graph-panel", "data-testid": "panel" }, h("p", { class: "muted" }, "Click a node for details."));
  const title = columnView
    ? `Column lineage of ${shortName(rootParsed.name)}.${rootParsed.field}`
    : `Lineage of ${rootParsed.type} ${shortName(rootParsed.name)}`;

  const go = (next: Partial<ViewState>) => {
    history.pushState(null, "", writeState({ ...state, ...next }));
    window.dispatchEvent(new PopStateEvent("popstate"));
  };
  const directionSelect = h("select", { "aria-label": "direction", onchange: (e: Event) => go({ direction: (e.target as HTMLSelectElement).value, expansions: [] }) },
    ...["both", "upstream", "downstream"].map((d) => h("option", { value: d, selected: d === state.direction }, d)));
  const depthInput = h("input", { type: "number", min: 0, max: 100, value: state.depth, "aria-label": "depth", class: "small",
    onchange: (e: Event) => go({ depth: Number((e.target as HTMLInputElement).value) }) });
  const asOfInput = h("input", { type: "text", placeholder: "as of (ISO time)", value: state.asOf, "aria-label": "as of",
    onchange: (e: Event) => go({ asOf: (e.target as HTMLInputElement).value.trim() }) });
  const collapseBox = h("input", { type: "checkbox", checked: state.collapse, "aria-label": "collapse child jobs",
    onchange: (e: Event) => go({ collapse: (e.target as HTMLInputElement).checked }) });
  const toolbar = h("div", { class: "toolbar" },
    h("label", {}, "direction ", directionSelect), h("label", {}, "depth ", depthInput), asOfInput,
    columnView ? null : h("label", {}, collapseBox, " collapse child jobs"),
    h("button", { type: "button", onclick: () => cy?.fit(undefined, 30) }, "fit"),
    state.from || state.to ? h("button", { type: "button", onclick: () => go({ from: "", to: "" }) }, "clear path") : null,
    status);
  root.append(h("div", { class: "lineage-head" }, h("h1", {}, title), link(pageUrl.forNode(state.nodeId) ?? "/", "open page")),
    toolbar, h("div", { class: "graph-layout" }, canvas, panel));

  const model = new LineageModel();
  let cy: cytoscape.Core | null = null;
  const started = performance.now();
  try {
    const asked = (nodeId: string, direction: string, depth: number): Promise<V2Graph> =>
      api.lineage({ nodeId, direction, depth, asOf: state.asOf || undefined, maxNodes: state.maxNodes });
    const answers = await Promise.all([
      asked(state.nodeId, state.direction, state.depth),
      ...state.expansions.map((x) => asked(x.nodeId, x.direction, x.depth)),
    ]);
    answers.forEach((answer) => model.merge(answer));
  } catch (error) {
    status.textContent = "";
    canvas.replaceWith(errorBox(error));
    return;
  }
  const fetched = performance.now();

  // Job details for state colours, run times and parents (needed before drawing when collapsing).
  const jobNamespaces = [...new Set([...model.nodes.values()].filter((n) => n.type === "JOB").map((n) => parseNodeId(n.id).namespace))];
  const jobDetails = async () => {
    const maps = await Promise.all(jobNamespaces.map((ns) => jobsOf(ns).catch(() => new Map<string, Job>())));
    return new Map(maps.flatMap((m) => [...m]));
  };
  let jobs = new Map<string, Job>();
  let parentOf: Map<string, string> | null = null;
  if (state.collapse) {
    jobs = await jobDetails();
    parentOf = new Map();
    for (const [id, job] of jobs) {
      const parent = parentJobId(job);
      if (parent && model.nodes.has(id)) parentOf.set(id, parent);
    }
  }

  const { nodes, edges } = drawable(model, parentOf);
  const large = nodes.length > LARGE;
  // dagre for small graphs (nicest result), headwater's linear-time layered layout past
  // DAGRE_MAX nodes (dagre and ELK both measured over the draw budget there: see layered.ts).
  const chosen = url.searchParams.get("layout");
  const useDagre = chosen === "dagre" || (chosen !== "layered" && nodes.length <= DAGRE_MAX);
  // Field boxes inside dataset boxes need dagre's compound layout; big column graphs go flat.
  const grouped = columnView && useDagre;
  const elements: cytoscape.ElementDefinition[] = [];
  if (grouped) {
    // Fields sit inside a box per dataset.
    const datasets = new Set(nodes.map((n) => { const p = parseNodeId(n.id); return nodeIds.dataset(p.namespace, p.name); }));
    for (const id of datasets) elements.push({ group: "nodes", data: { id, label: shortName(parseNodeId(id).name), kind: "DATASET" } });
  }
  for (const node of nodes) {
    const parsed = parseNodeId(node.id);
    elements.push({
      group: "nodes",
      data: {
        id: node.id,
        label: nodeLabel(node, jobs, grouped),
        kind: node.type,
        collapsed: node.members.length > 0,
        stateColour: STATE_COLOURS[String(node.data?.state ?? "")] ?? "#8a9bb0",
        parent: grouped ? nodeIds.dataset(parsed.namespace, parsed.name) : undefined,
      },
      classes: node.id === state.nodeId ? "root" : "",
    });
  }
  for (const edge of edges) {
    elements.push({
      group: "edges",
      data: { id: edge.id, source: edge.upstream, target: edge.downstream, via: edge.via ?? "", kind: columnView ? edge.kind : "table",
        ...(columnView && edge.label ? { label: edge.label } : {}) },
    });
  }

  const positions = useDagre ? null : layered({
    ids: nodes.map((n) => n.id),
    edges,
    size: (id) => ({ width: 170, height: model.nodes.get(id)?.type === "JOB" ? 44 : 38 }),
    rankSep: columnView ? 140 : 70,
  });
  cy = cytoscape({
    container: canvas,
    elements,
      style: stylesheet(large),
    minZoom: 0.02,
    maxZoom: 3,
    textureOnViewport: large,
    hideEdgesOnViewport: nodes.length > 2000,
    pixelRatio: large ? 1 : "auto",
    layout: useDagre
      ? ({
        name: "dagre",
        rankDir: "LR",
        nodeSep: columnView ? 12 : 20,
        rankSep: columnView ? 140 : 70,
        ranker: RANKERS.has(url.searchParams.get("ranker") ?? "") ? url.searchParams.get("ranker") : "network-simplex",
        fit: true,
        padding: 30,
        animate: false,
      } as cytoscape.LayoutOptions)
      : { name: "preset", positions: (node: cytoscape.NodeSingular) => positions!.get(node.id())!, fit: true, padding: 30 } as cytoscape.LayoutOptions,
  });
  previous = cy;
  const drawn = performance.now();
  exposeGraph(cy, { nodes: nodes.length, edges: edges.length, fetchMs: fetched - started, drawMs: drawn - fetched, totalMs: drawn - started });
  status.textContent = `${nodes.length} nodes, ${edges.length} edges${model.truncated ? " — truncated at maxNodes; narrow the depth or raise maxNodes" : ""}`;
  if (model.truncated) {
    status.append(" ", h("button", { type: "button", onclick: () => go({ maxNodes: state.maxNodes * 5 }) }, "show more"));
  }
  // Ready once the first frame with the graph has been painted.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const painted = performance.now();
  Object.assign((window as unknown as { headwater: { timings: Record<string, number> } }).headwater.timings, {
    paintMs: painted - drawn, firstDrawMs: painted - started, sincePageStartMs: painted,
  });
  canvas.dataset.ready = "true";

  const highlight = () => {
    // Each render draws a fresh graph, so there is nothing to clear; touching every element's
    // classes would restyle all of them (seconds at 10,000 nodes).
    if (!state.from || !state.to) return;
    const path = pathBetween(edges, state.from, state.to);
    if (!path.nodes.size) {
      status.append(h("span", { class: "warn", "data-testid": "no-path" }, " — no directed path between the two nodes"));
      return;
    }
    cy!.elements().addClass("dimmed");
    cy!.nodes().filter((n) => path.nodes.has(n.id()) || n.isParent()).removeClass("dimmed").addClass("on-path");
    cy!.edges().filter((e) => path.edges.has(e.id())).removeClass("dimmed").addClass("on-path");
  };
  highlight();

  const expand = (nodeId: string, direction: Expansion["direction"], depth: number) =>
    go({ expansions: [...state.expansions, { direction, depth, nodeId }], selected: nodeId });

  const showPanel = (id: string) => {
    const node = model.nodes.get(id);
    const drawnNode = nodes.find((n) => n.id === id);
    const parsed = parseNodeId(id);
    const page = pageUrl.forNode(id);
    const job = jobs.get(id);
    fill(panel,
      h("h3", {}, parsed.field ? `${shortName(parsed.name)}.${parsed.field}` : shortName(parsed.name)),
      h("p", { class: "muted mono" }, id),
      page ? link(page, "open page") : null,
      node?.data?.version ? h("p", {}, "version ", h("span", { class: "mono" }, String(node.data.version))) : null,
      job?.latestRun ? h("p", {}, "last run ", stateBadge(job.latestRun.state), " ", formatTime(job.latestRun.startedAt)) : null,
      h("div", { class: "buttons" },
        h("button", { type: "button", "data-action": "expand-upstream", onclick: () => expand(id, "upstream", 1) }, "◀ expand upstream"),
        h("button", { type: "button", "data-action": "expand-downstream", onclick: () => expand(id, "downstream", 1) }, "expand downstream ▶"),
        h("button", { type: "button", "data-action": "expand-depth", onclick: () => expand(id, "both", state.depth) }, `expand both to depth ${state.depth}`),
        h("button", { type: "button", "data-action": "recenter", onclick: () => go({ nodeId: id, expansions: [], from: "", to: "" }) }, "re-centre here"),
        h("button", { type: "button", "data-action": "path-from", onclick: () => go({ from: id, selected: id }) }, "path from here"),
        h("button", { type: "button", "data-action": "path-to", onclick: () => go({ to: id, selected: id }) }, "path to here")),
      drawnNode?.members.length ? h("div", {}, h("h4", {}, "Collapsed child jobs"),
        h("ul", {}, drawnNode.members.map((m) => h("li", {}, link(pageUrl.forNode(m) ?? "/", shortName(parseNodeId(m).name)))))) : null,
    );
    if (parsed.type === "dataset") void fieldList(panel, parsed.namespace, parsed.name);
    if (parsed.type === "datasetField") {
      const incoming: DrawEdge[] = edges.filter((e) => e.downstream === id);
      if (incoming.length) {
        panel.append(h("h4", {}, "Derived from"), h("ul", { class: "derived" }, incoming.map((e) =>
          h("li", {}, `${shortName(parseNodeId(e.upstream).name)}.${parseNodeId(e.upstream).field} — ${e.label || "?"}`,
            e.via ? h("span", { class: "muted" }, ` via ${shortName(parseNodeId(e.via).name)}`) : null))));
      }
    }
  };
  cy.on("tap", "node", (event) => {
    if (event.target.isParent()) return;
    showPanel(event.target.id());
    // Remember the selection in the URL (no new history entry) so a reload keeps the panel.
    history.replaceState(null, "", writeState({ ...state, selected: event.target.id() }));
  });
  if (state.selected && model.nodes.has(state.selected)) {
    cy.getElementById(state.selected).select();
    showPanel(state.selected);
  }
  cy.on("dbltap", "node", (event) => { if (!event.target.isParent()) expand(event.target.id(), "both", 1); });
  cy.on("tap", "edge", (event) => {
    const e = event.target;
    fill(panel,h("h3", {}, "Edge"), h("p", { class: "mono" }, `${e.data("source")} → ${e.data("target")}`),
      e.data("via") ? h("p", {}, "via ", link(pageUrl.forNode(e.data("via")) ?? "/", shortName(parseNodeId(e.data("via")).name))) : null,
      e.data("label") ? h("p", {}, "transformation: ", e.data("label")) : null);
  });

  // Decorate job nodes with their latest run (colour, time) once known; no relayout needed.
  if (!state.collapse && jobNamespaces.length) {
    jobs = await jobDetails();
    cy.batch(() => {
      for (const node of nodes) {
        if (node.type !== "JOB") continue;
        const job = jobs.get(node.id);
        const element = cy!.getElementById(node.id);
        element.data("label", nodeLabel(node, jobs));
        if (job?.latestRun) element.data("stateColour", STATE_COLOURS[job.latestRun.state] ?? "#8a9bb0");
        element.data("state", job?.latestRun?.state ?? "");
      }
    });
  } else {
    cy.batch(() => {
      for (const node of nodes) {
        const job = jobs.get(node.id);
        if (job?.latestRun) cy!.getElementById(node.id).data({ stateColour: STATE_COLOURS[job.latestRun.state], state: job.latestRun.state });
      }
    });
  }
  canvas.dataset.decorated = "true";
}

/** A dataset's columns in the side panel, each a link to its column lineage. */
async function fieldList(panel: HTMLElement, namespace: string, name: string): Promise<void> {
  try {
    const dataset = await api.dataset(namespace, name);
    panel.append(h("h4", {}, "Columns"), h("ul", { class: "fields" }, dataset.fields.map((f) =>
      h("li", {}, link(pageUrl.lineage(nodeIds.field(namespace, name, f.name), { direction: "both", depth: "5" }), f.name,
        { "data-field": f.name }), h("span", { class: "muted" }, ` ${f.type ?? ""}`)))));
  } catch (error) {
    panel.append(errorBox(error));
  }
}

/**
 * `window.headwater`: what is drawn, in plain data (ids, labels, classes, on-screen positions
 * relative to the canvas) plus the last draw's timings. The browser tests and the draw
 * benchmark read it; it is also handy from the devtools console.
 */
function exposeGraph(cy: cytoscape.Core, timings: Record<string, number>): void {
  (window as unknown as { headwater: unknown }).headwater = {
    timings,
    graph: () => ({
      nodes: cy.nodes().map((n) => ({
        id: n.id(), label: n.data("label"), kind: n.data("kind"), state: n.data("state") ?? "",
        classes: n.classes(), parent: n.data("parent") ?? null, x: n.renderedPosition("x"), y: n.renderedPosition("y"),
      })),
      edges: cy.edges().map((e) => ({
        source: e.data("source"), target: e.data("target"), label: e.data("label") ?? "", via: e.data("via"), classes: e.classes(),
      })),
      zoom: cy.zoom(),
    }),
    panBy: (x: number, y: number) => cy.panBy({ x, y }),
    zoomBy: (factor: number) => cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  };
}
