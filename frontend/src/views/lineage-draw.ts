// Turning the explorer's drawable nodes and edges into a Cytoscape.js graph: labels, state
// colours, the layout (dagre for small graphs, headwater's layered layout for big ones), and
// `window.headwater`, what is drawn in plain data for the browser tests and the benchmark.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";

import { nodeIds, parseNodeId, runJobId, type Job, type JobNodeData, type Run, type RunNodeData } from "../api";
import { formatTime } from "../dom";
import { shortName, type DrawEdge, type DrawNode } from "../graph/model";
import { fitLabel, fitLine, ZOOM } from "../graph/labels";
import { layered } from "../graph/layered";
import { shortRunIds } from "../run-ids";
import { STATE_COLOURS, stylesheet } from "../graph/style";
import { labelNearView, OFFSCREEN, skipImpossibleLayers } from "../graph/viewport-cost";

cytoscape.use(dagre);

/** Above this many nodes the graph is drawn in its cheaper mode (straight edges, no arrows). */
const LARGE = 300;
/** Up to this many nodes dagre lays the graph out; above, the fast layered layout does. */
const DAGRE_MAX = 150;
/** dagre's rankers; `?ranker=` overrides the choice (the draw benchmark compares them). */
const RANKERS = new Set(["network-simplex", "tight-tree", "longest-path"]);
const NO_STATE = "#8a9bb0";
/** The label line of a node whose neighbours a maxNodes cut left out. */
export const TRUNCATED_MARK = "⋯ truncated — expand";

const short = (time: string | null | undefined) => (time ? formatTime(time).slice(0, 16) : "");

/**
 * A node's label and run state. Job nodes show their latest run's start time; run nodes their
 * job and id; folded parents how many children they hold. `parent` is a folded parent's own
 * details, when they have been fetched.
 */
export function nodeLook(node: DrawNode, grouped: boolean, parent?: Job | Run, runIds?: Map<string, string>): { label: string; state: string } {
  const parsed = parseNodeId(node.id);
  if (node.type === "DATASET_FIELD") {
    return { label: grouped ? (parsed.field ?? node.id) : `${shortName(parsed.name)}.${parsed.field}`, state: "" };
  }
  if (node.type === "RUN") {
    const data = node.data as RunNodeData | null;
    const run = parent as Run | undefined;
    const jobId = runJobId(data);
    const job = jobId ? parseNodeId(jobId).name : run?.jobVersion?.name;
    const folded = node.members.length ? ` (+${node.members.length} runs)` : "";
    const head = job ? `${shortName(job)}${folded}` : `run${folded}`;
    const started = short(data?.startedAt ?? run?.startedAt);
    const id = runIds?.get(parsed.name) ?? parsed.name.slice(0, 8);
    return { label: `${head}\nrun ${id}${started ? ` · ${started}` : ""}`, state: data?.state ?? run?.state ?? "" };
  }
  if (node.type === "JOB") {
    const latest = (node.data as JobNodeData | null)?.latestRun ?? (parent as Job | undefined)?.latestRun;
    const folded = node.members.length ? ` (+${node.members.length} jobs)` : "";
    const when = short(latest?.startedAt);
    return { label: `${shortName(parsed.name)}${folded}${when ? `\n${when}` : ""}`, state: latest?.state ?? "" };
  }
  return { label: shortName(parsed.name), state: "" };
}

/** The label font size of a node kind in graph units (graph/style.ts). */
export const fontOf = (kind: string): number => (kind === "JOB" || kind === "RUN" ? 10 : 11);

/** A node's drawn label (each line fitted to its box) and its tooltip (the whole label and id). */
function labelData(id: string, kind: string, label: string): { label: string; full: string } {
  return { label: fitLabel(label, fontOf(kind)), full: `${label}\n${id}` };
}

export interface DrawOptions {
  canvas: HTMLElement;
  nodes: DrawNode[];
  edges: DrawEdge[];
  rootId: string;
  columnView: boolean;
  /** Nodes with neighbours left out of a limited view; drawn with a dashed border. */
  frontier: Set<string>;
  /** Nodes with neighbours the server's maxNodes cut left out; marked "truncated — expand". */
  truncated: Set<string>;
  /** `?layout=` and `?ranker=` from the URL. */
  layout: string | null;
  ranker: string | null;
}

export function drawGraph(options: DrawOptions): cytoscape.Core {
  const { nodes, edges, columnView } = options;
  const large = nodes.length > LARGE;
  // dagre for small graphs (nicest result), headwater's linear-time layered layout past
  // DAGRE_MAX nodes (dagre and ELK both measured over the draw budget there: see layered.ts).
  const useDagre = options.layout === "dagre" || (options.layout !== "layered" && nodes.length <= DAGRE_MAX);
  // Field boxes inside dataset boxes need dagre's compound layout; big column graphs go flat.
  const grouped = columnView && useDagre;
  const elements: cytoscape.ElementDefinition[] = [];
  if (grouped) {
    const datasets = new Set(nodes.map((n) => { const p = parseNodeId(n.id); return nodeIds.dataset(p.namespace, p.name); }));
    for (const id of datasets) {
      const name = shortName(parseNodeId(id).name);
      elements.push({ group: "nodes", data: { id, label: fitLine(name, 11, 400, true), full: `${name}\n${id}`, kind: "DATASET" } });
    }
  }
  // Run ids as the shortest prefixes that tell the drawn runs apart.
  const runIds = shortRunIds(nodes.filter((n) => n.type === "RUN").map((n) => parseNodeId(n.id).name));
  for (const node of nodes) {
    const parsed = parseNodeId(node.id);
    const { label, state } = nodeLook(node, grouped, undefined, runIds);
    // A dataset whose newest assertions fail is marked, with the count on a line of its own.
    const failed = (node.data as { failedAssertions?: number } | null)?.failedAssertions ?? 0;
    // A job a JobEvent declares (static lineage: a dashboard, a report) is drawn apart from
    // one seen running, and says so on a line of its own.
    const declared = node.type === "JOB" && (node.data as { declared?: boolean } | null)?.declared === true;
    // A big graph's labels are measured and drawn only near the view (graph/viewport-cost.ts).
    const cut = options.truncated.has(node.id);
    const classes = [node.id === options.rootId ? "root" : "", options.frontier.has(node.id) ? "more" : "", cut ? "truncated" : "",
      failed ? "failing" : "", declared ? "declared" : "", large && !grouped ? OFFSCREEN : ""].filter(Boolean).join(" ");
    const looks = labelData(node.id, node.type, label);
    const mark = failed ? `✗ ${failed} assertion${failed === 1 ? "" : "s"} failing` : declared ? "◇ declared" : cut ? TRUNCATED_MARK : "";
    elements.push({
      group: "nodes",
      data: {
        id: node.id,
        label: mark ? `${looks.label}\n${mark}` : looks.label,
        full: mark ? `${looks.full}\n${mark}` : looks.full,
        failedAssertions: failed,
        declared,
        kind: node.type,
        datasetType: (node.data as { datasetType?: string } | null)?.datasetType ?? "",
        state,
        collapsed: node.members.length > 0,
        stateColour: STATE_COLOURS[state] ?? NO_STATE,
        parent: grouped ? nodeIds.dataset(parsed.namespace, parsed.name) : undefined,
      },
      classes,
    });
  }
  for (const edge of edges) {
    elements.push({
      group: "edges",
      data: { id: edge.id, source: edge.upstream, target: edge.downstream, via: edge.via ?? "", kind: columnView ? edge.kind : "table",
        ...(columnView && edge.label ? { label: edge.label } : {}) },
    });
  }
  const kindOf = new Map(nodes.map((n) => [n.id, n.type]));
  const positions = useDagre ? null : layered({
    ids: nodes.map((n) => n.id),
    edges,
    size: (id) => ({ width: 170, height: kindOf.get(id) === "JOB" || kindOf.get(id) === "RUN" ? 44 : 38 }),
    rankSep: columnView ? 140 : 70,
  });
  const cy = cytoscape({
    container: options.canvas,
    elements,
    style: stylesheet(large),
    // The zoom range keeps every label at or above the font floor (graph/labels.ts).
    minZoom: ZOOM.min,
    maxZoom: ZOOM.max,
    textureOnViewport: large,
    hideEdgesOnViewport: nodes.length > 2000,
    pixelRatio: large ? 1 : "auto",
    layout: useDagre
      ? ({
        name: "dagre",
        rankDir: "LR",
        nodeSep: columnView ? 12 : 20,
        rankSep: columnView ? 140 : 70,
        ranker: RANKERS.has(options.ranker ?? "") ? options.ranker : "network-simplex",
        fit: true,
        padding: 30,
        animate: false,
      } as cytoscape.LayoutOptions)
      : { name: "preset", positions: (node: cytoscape.NodeSingular) => positions!.get(node.id())!, fit: true, padding: 30 } as cytoscape.LayoutOptions,
  });
  // A graph too big to fit at the smallest readable zoom opens on its root.
  const root = cy.getElementById(options.rootId);
  if (cy.zoom() <= ZOOM.min + 1e-6 && root.nonempty()) cy.center(root);
  labelNearView(cy);
  skipImpossibleLayers(cy);
  // The whole label and id of the node under the pointer, as the canvas's tooltip.
  cy.on("mouseover", "node", (event) => { options.canvas.title = event.target.data("full") ?? ""; });
  cy.on("mouseout", "node", () => { options.canvas.removeAttribute("title"); });
  return cy;
}

/** Re-label folded parents once their own details are known (no relayout: sizes do not change). */
export function decorateParents(cy: cytoscape.Core, nodes: DrawNode[], parents: Map<string, Job | Run>): void {
  const runIds = shortRunIds(nodes.filter((n) => n.type === "RUN").map((n) => parseNodeId(n.id).name));
  cy.batch(() => {
    for (const node of nodes) {
      const parent = parents.get(node.id);
      if (!parent) continue;
      const { label, state } = nodeLook(node, false, parent, runIds);
      cy.getElementById(node.id).data({ ...labelData(node.id, node.type, label), state, stateColour: STATE_COLOURS[state] ?? NO_STATE });
    }
  });
}

/**
 * `window.headwater`: what is drawn, in plain data (ids, labels, classes, on-screen positions
 * relative to the canvas), the last draw's timings and the limited view's extent, and `forget()`
 * to drop the kept API answers. The browser tests and the draw benchmark use it; it is also
 * handy from the devtools console.
 */
export function exposeGraph(cy: cytoscape.Core, timings: Record<string, number>, view: Record<string, unknown>,
  forget: () => void): void {
  (window as unknown as { headwater: unknown }).headwater = {
    timings,
    view,
    forget,
    graph: () => ({
      nodes: cy.nodes().map((n) => ({
        id: n.id(), label: n.data("label"), full: n.data("full") ?? "", kind: n.data("kind"), datasetType: n.data("datasetType") ?? "", state: n.data("state") ?? "",
        classes: n.classes(), parent: n.data("parent") ?? null, badges: n.data("badges") ?? "", x: n.renderedPosition("x"), y: n.renderedPosition("y"),
      })),
      edges: cy.edges().map((e) => ({
        source: e.data("source"), target: e.data("target"), label: e.data("label") ?? "", via: e.data("via"), classes: e.classes(),
      })),
      zoom: cy.zoom(),
      minZoom: cy.minZoom(),
      maxZoom: cy.maxZoom(),
    }),
    // Each drawn label's on-screen font size and its box and its node's box (graph units):
    // the browser tests check that labels stay readable, inside their node and apart.
    labels: () => cy.nodes().filter((n) => !n.isParent()).map((n) => ({
      id: n.id(),
      fontPx: parseFloat(n.style("font-size")) * cy.zoom(),
      label: n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false } as cytoscape.BoundingBoxOptions),
      node: n.boundingBox({ includeNodes: true, includeEdges: false, includeLabels: false, includeOverlays: false } as cytoscape.BoundingBoxOptions),
    })),
    zoomTo: (level: number) => { cy.zoom(level); },
    // Pan a node into view when it is off the canvas (as a person would before clicking it);
    // its on-screen position after.
    reveal: (id: string) => {
      const node = cy.getElementById(id);
      const { x, y } = node.renderedPosition();
      if (x < 40 || y < 30 || x > cy.width() - 40 || y > cy.height() - 30) cy.center(node);
      return node.renderedPosition();
    },
    panBy: (x: number, y: number) => cy.panBy({ x, y }),
    zoomBy: (factor: number) => cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  };
}
