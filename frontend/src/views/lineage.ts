// The lineage explorer: a directed left-to-right graph around one node, expandable one hop
// at a time, with path highlighting, child jobs and child runs collapsible under their
// parent, and big answers drawn a few hops at a time. The view state is all in the URL
// (lineage-state.ts); job colours, run times and parents come from the nodes' data in the
// /api/v2/lineage answer itself, so nothing is fetched per namespace.
import type cytoscape from "cytoscape";

import { api, parseNodeId, pageUrl, type Job, type Run, type V2Graph } from "../api";
import { errorBox, h, link } from "../dom";
import { drawable, foldedInto, foldMap, LineageModel, pathBetween, shortName } from "../graph/model";
import { visibleView, type Source } from "../graph/visible";
import { decorateParents, drawGraph, exposeGraph } from "./lineage-draw";
import { decorateTags, fetchBadges } from "./lineage-tags";
import { keyboardNavigation } from "./lineage-keys";
import { legend } from "./lineage-legend";
import { navigate } from "../router";
import { showPanel, type PanelContext } from "./lineage-panel";
import { readState, writeState, type Expansion, type ViewState } from "./lineage-state";
import { cached, forgetAnswers } from "./lineage-answers";

/** At most this many child runs of a root run have their lineage merged into its view. */
const CHILD_RUNS_MAX = 100;
/** At most this many folded parents have their own details fetched for their label. */
const PARENT_DETAILS_MAX = 50;

// The drawn graph of the previous render, released when the view is drawn again.
let previous: cytoscape.Core | null = null;


/** How many levels of runs under a root run are followed (orchestrator → application → action). */
const RUN_LEVELS = 3;

/**
 * A run's own lineage plus its descendants': its child runs', and where a child reads and
 * writes nothing itself (an application run under an orchestrator's run) that child's
 * children's, RUN_LEVELS down, CHILD_RUNS_MAX runs at most.
 */
async function fetchAnswers(state: ViewState): Promise<{ answers: V2Graph[]; children: string[]; childCount: number; levels: number }> {
  const asked = (nodeId: string, direction: string, depth: number): Promise<V2Graph> => {
    const params = { nodeId, direction, depth, asOf: state.asOf || undefined, maxNodes: state.maxNodes };
    return cached(`lineage ${JSON.stringify(params)}`, () => api.lineage(params));
  };
  const own = await Promise.all([asked(state.nodeId, state.direction, state.depth), ...state.expansions.map((x) => asked(x.nodeId, x.direction, x.depth))]);
  const children: string[] = [];
  const childAnswers: V2Graph[] = [];
  let childCount = 0;
  let levels = 0;
  let parents = parseNodeId(state.nodeId).type === "run" ? [parseNodeId(state.nodeId).name] : [];
  const none = { runs: [] as Run[], totalCount: 0 };
  while (parents.length && levels < RUN_LEVELS && children.length < CHILD_RUNS_MAX) {
    // The children are extra: a failure to list them leaves the run's own lineage.
    const lists = await Promise.all(parents.map((id) =>
      cached(`children ${id}`, () => api.runChildren(id, CHILD_RUNS_MAX)).catch(() => none)));
    if (levels === 0) childCount = lists[0].totalCount;
    const found = lists.flatMap((list) => list.runs.map((run) => `run:${run.id}`)).slice(0, CHILD_RUNS_MAX - children.length);
    if (!found.length) break;
    levels++;
    const answers = await Promise.all(found.map((id) => asked(id, state.direction, state.depth)));
    children.push(...found);
    childAnswers.push(...answers);
    parents = found.filter((_, i) => !answers[i].edges.length).map((id) => parseNodeId(id).name);
  }
  return { answers: [...own, ...childAnswers], children, childCount, levels };
}

/**
 * How the explorer is shown inside another page (a run's page): under a second-level heading,
 * in a shorter box, and without touching the page's URL — a node's selection shows its
 * details only, and any control opens the whole explorer at that view.
 */
export interface Embedding {
  heading: string;
}

export async function lineageView(root: HTMLElement, url: URL, embedding?: Embedding): Promise<void> {
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
  const panelBody = h("div", { "data-testid": "panel", "aria-live": "polite" }, h("p", { class: "muted" }, "Click a node for details."));
  const panel = h("aside", { class: "graph-panel", "aria-label": "details" }, panelBody, legend());
  const title = columnView
    ? `Column lineage of ${shortName(rootParsed.name)}.${rootParsed.field}`
    : `Lineage of ${rootParsed.type} ${rootParsed.type === "run" ? rootParsed.name.slice(0, 8) : shortName(rootParsed.name)}`;

  const go = (next: Partial<ViewState>) => {
    history.pushState(null, "", writeState({ ...state, ...next }));
    window.dispatchEvent(new PopStateEvent("popstate"));
  };
  const directionSelect = h("select", { "aria-label": "direction", onchange: (e: Event) => go({ direction: (e.target as HTMLSelectElement).value, expansions: [], level: null }) },
    ...["both", "upstream", "downstream"].map((d) => h("option", { value: d, selected: d === state.direction }, d)));
  const depthInput = h("input", { type: "number", min: 0, max: 100, value: state.depth, "aria-label": "depth", class: "small",
    onchange: (e: Event) => go({ depth: Number((e.target as HTMLInputElement).value), level: null }) });
  const asOfInput = h("input", { type: "text", placeholder: "as of (ISO time)", value: state.asOf, "aria-label": "as of",
    onchange: (e: Event) => go({ asOf: (e.target as HTMLInputElement).value.trim() }) });
  const collapseBox = h("input", { type: "checkbox", checked: state.collapse, "aria-label": "collapse child jobs and runs",
    onchange: (e: Event) => go({ collapse: (e.target as HTMLInputElement).checked, open: [] }) });
  let cy: cytoscape.Core | null = null;
  const zoomBy = (factor: number) => cy?.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  const toolbar = h("div", { class: "toolbar" },
    h("label", {}, "direction ", directionSelect), h("label", {}, "depth ", depthInput), asOfInput,
    columnView ? null : h("label", {}, collapseBox, " collapse child jobs and runs"),
    h("button", { type: "button", onclick: () => cy?.fit(undefined, 30) }, "fit"),
    // Zoom steps stay inside the view's zoom range, where every label is readable.
    h("button", { type: "button", "data-action": "zoom-in", "aria-label": "zoom in", onclick: () => zoomBy(1.25) }, "+"),
    h("button", { type: "button", "data-action": "zoom-out", "aria-label": "zoom out", onclick: () => zoomBy(0.8) }, "−"),
    state.from || state.to ? h("button", { type: "button", onclick: () => go({ from: "", to: "" }) }, "clear path") : null,
    status);
  const head = embedding
    ? h("div", { class: "lineage-head" }, h("h2", {}, embedding.heading), link(writeState(state), "open in the lineage explorer", { "data-testid": "open-explorer" }))
    : h("div", { class: "lineage-head" }, h("h1", {}, title), link(pageUrl.forNode(state.nodeId) ?? "/", "open page"));
  root.append(head, toolbar, h("div", { class: embedding ? "graph-layout embedded" : "graph-layout" }, canvas, panel));

  const model = new LineageModel();
  const started = performance.now();
  let childRuns = 0;
  let childIds: string[] = [];
  let runLevels = 0;
  try {
    const { answers, children, childCount, levels } = await fetchAnswers(state);
    answers.forEach((answer) => model.merge(answer));
    childRuns = childCount;
    childIds = children;
    runLevels = levels;
  } catch (error) {
    status.textContent = "";
    canvas.replaceWith(errorBox(error));
    return;
  }
  const fetched = performance.now();
  if (!canvas.isConnected) return; // the user moved on while the answer was on its way

  // Fold children into parents (from the nodes' own data), then limit a big answer to the
  // hops nearest the root and the expansions.
  const folds = state.collapse && !columnView ? foldMap(model, state.open) : null;
  const all = drawable(model, folds);
  const alias = (id: string) => foldedInto(folds, id);
  const rootId = alias(state.nodeId);
  const sources: Source[] = [
    { nodeId: rootId, direction: state.direction as Source["direction"] },
    ...state.expansions.map((x) => ({ nodeId: alias(x.nodeId), direction: x.direction })),
    // An application run's view is its children's lineage: each child is walked from too.
    ...childIds.map((id) => ({ nodeId: alias(id), direction: state.direction as Source["direction"] })),
  ];
  const path = state.from && state.to ? pathBetween(all.edges, alias(state.from), alias(state.to)) : null;
  const view = visibleView(all.nodes.map((n) => n.id), all.edges, sources, state.limit, state.level, path?.nodes ?? []);
  const nodes = view.level === null ? all.nodes : all.nodes.filter((n) => view.shown.has(n.id));
  const edges = view.level === null ? all.edges : all.edges.filter((e) => view.shown.has(e.upstream) && view.shown.has(e.downstream));

  // Nodes whose neighbours the server's maxNodes cut left out (a folded parent when one of
  // its members is): each says so on the graph, and expanding it fetches just its neighbourhood.
  const truncated = new Set(nodes.filter((n) => model.isCut(n.id) || n.members.some((m) => model.isCut(m))).map((n) => n.id));
  cy = drawGraph({ canvas, nodes, edges, rootId, columnView, frontier: view.frontier, truncated,
    layout: url.searchParams.get("layout"), ranker: url.searchParams.get("ranker") });
  previous = cy;
  const drawn = performance.now();
  const extent = { shown: nodes.length, total: all.nodes.length, level: view.level, maxLevel: view.maxLevel, limit: state.limit, childRuns,
    maxNodes: state.maxNodes, truncated: [...truncated] };
  const timings: Record<string, number> = { nodes: nodes.length, edges: edges.length, fetchMs: fetched - started, drawMs: drawn - fetched, totalMs: drawn - started };
  exposeGraph(cy, timings, extent, forgetAnswers);
  status.textContent = `${nodes.length} nodes, ${edges.length} edges`;
  if (view.level !== null) {
    // Say that the view is limited, and offer to grow it.
    status.append(h("span", { "data-testid": "limited" },
      ` — showing ${nodes.length.toLocaleString("en")} of ${all.nodes.length.toLocaleString("en")} nodes: `
      + `${view.level} of ${view.maxLevel} hops from the root (the answer is past the draw limit of ${state.limit.toLocaleString("en")} nodes)`),
    " ", h("button", { type: "button", "data-action": "grow", onclick: () => go({ level: view.level! + 1 }) }, "one hop more"),
    " ", h("button", { type: "button", "data-action": "show-all", onclick: () => go({ level: null, limit: 0 }) }, "show all"));
  }
  if (childIds.length) {
    status.append(h("span", { "data-testid": "child-runs" }, runLevels > 1
      ? ` — with the lineage of ${childIds.length} runs under it: its ${childRuns} child runs and theirs`
      : childRuns > childIds.length
        ? ` — with the lineage of the first ${childIds.length} of its ${childRuns} child runs`
        : ` — with the lineage of its ${childRuns} child runs`));
  }
  if (truncated.size) {
    // A bigger neighbourhood is reached a bounded answer at a time, from the nodes the cut marks.
    status.append(h("span", { "data-testid": "truncated" },
      ` — the answer is cut at ${state.maxNodes.toLocaleString("en")} nodes: ${truncated.size} node${truncated.size === 1 ? "" : "s"} `
      + "marked “truncated — expand” have more neighbours; double-click one (or select it and press expand) to fetch them"));
  }
  // Ready once the first frame with the graph has been painted.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const painted = performance.now();
  Object.assign(timings, { paintMs: painted - drawn, firstDrawMs: painted - started, sincePageStartMs: painted });
  canvas.dataset.ready = "true";

  if (path) {
    if (!path.nodes.size) {
      status.append(h("span", { class: "warn", "data-testid": "no-path" }, " — no directed path between the two nodes"));
    } else {
      cy.elements().addClass("dimmed");
      cy.nodes().filter((n) => path.nodes.has(n.id()) || n.isParent()).removeClass("dimmed").addClass("on-path");
      cy.edges().filter((e) => path.edges.has(e.id())).removeClass("dimmed").addClass("on-path");
    }
  }

  const expand = (nodeId: string, direction: Expansion["direction"], depth: number) =>
    go({ expansions: [...state.expansions, { direction, depth, nodeId }], selected: nodeId });
  const context: PanelContext = {
    panel: panelBody, state, go, expand, answer: model.nodes, drawn: new Map(nodes.map((n) => [n.id, n])), edges,
    frontier: view.frontier, truncated, parents: new Map(),
  };
  // Remember the selection in the URL (no new history entry) so a reload keeps the panel;
  // an embedded graph leaves its page's URL alone.
  const remember = (selected: string) => {
    if (!embedding) history.replaceState(null, "", writeState({ ...state, selected }));
  };
  const select = (id: string) => {
    showPanel(context, id);
    remember(id);
  };
  cy.on("tap", "node", (event) => {
    if (event.target.isParent()) return;
    select(event.target.id());
  });
  const drawnCy = cy;
  keyboardNavigation(canvas, cy, {
    rootId, select,
    open: (id) => navigate(pageUrl.forNode(id) ?? "/"),
    clear: () => remember(""),
  });
  Object.assign((window as unknown as { headwater: object }).headwater, {
    selected: () => drawnCy.nodes(":selected").map((n) => n.id())[0] ?? null,
  });
  const selected = alias(state.selected);
  if (selected && context.drawn.has(selected)) {
    cy.getElementById(selected).select();
    showPanel(context, selected);
  }
  cy.on("dbltap", "node", (event) => {
    const id: string = event.target.id();
    if (event.target.isParent()) return;
    // A folded parent unfolds; any other node grows one hop both ways.
    if (context.drawn.get(id)?.members.length) go({ open: [...state.open, id], selected: id });
    else expand(id, "both", 1);
  });
  cy.on("tap", "edge", (event) => {
    const e = event.target;
    panelBody.replaceChildren(h("h3", {}, "Edge"), h("p", { class: "mono" }, `${e.data("source")} → ${e.data("target")}`),
      e.data("via") ? h("p", {}, "via ", link(pageUrl.forNode(e.data("via")) ?? "/", shortName(parseNodeId(e.data("via")).name))) : "",
      e.data("label") ? h("p", {}, "transformation: ", e.data("label")) : "");
  });

  // Folded parents are often not in the answer (an application's job and run read and write
  // nothing themselves): fetch their own details for the label and colour, a few at most.
  const badges = cached(`badges ${state.asOf}`, () => fetchBadges(state.asOf || undefined));
  const folded = nodes.filter((n) => n.members.length && !n.data?.state && !n.data?.latestRun).slice(0, PARENT_DETAILS_MAX);
  const details = await Promise.all(folded.map(async (n): Promise<[string, Job | Run] | null> => {
    const p = parseNodeId(n.id);
    try {
      return [n.id, await cached<Job | Run>(`details ${n.id}`, () => (n.type === "RUN" ? api.run(p.name) : api.job(p.namespace, p.name)))];
    } catch {
      return null; // a parent the server does not know: keep the plain label
    }
  }));
  for (const entry of details) if (entry) context.parents.set(entry[0], entry[1]);
  if (previous !== cy) return; // drawn over by a newer render meanwhile
  decorateParents(cy, nodes, context.parents);
  const tagged = await badges;
  if (previous !== cy) return;
  decorateTags(cy, tagged);
  if (selected && context.parents.has(selected)) showPanel(context, selected);
  canvas.dataset.decorated = "true";
}
