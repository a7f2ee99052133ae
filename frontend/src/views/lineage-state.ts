// The lineage explorer's view state, all of it in the URL so every view can be bookmarked:
//   /lineage?nodeId=…&direction=both&depth=4&maxNodes=1000&asOf=…
//            &x=up:1:<node id>   (an expansion: direction, depth, node; repeatable)
//            &from=<id>&to=<id>  (highlight the path between two nodes)
//            &collapse=1         (fold child jobs into their parent job, child runs into their parent run)
//            &open=<node id>     (a folded parent shown unfolded again; repeatable)
//            &limit=2000         (draw limit: past it only the nearest hops are drawn first)
//            &level=3            (the hops drawn when the answer is past the draw limit)
//            &selected=<id>      (the node the side panel shows)

export interface Expansion {
  direction: "upstream" | "downstream" | "both";
  depth: number;
  nodeId: string;
}

export interface ViewState {
  nodeId: string;
  direction: string;
  depth: number;
  maxNodes: number;
  asOf: string;
  expansions: Expansion[];
  from: string;
  to: string;
  collapse: boolean;
  /** Folded parents (job or run ids) the user unfolded. */
  open: string[];
  /** Draw limit in nodes; 0 draws every node of the answer. */
  limit: number;
  /** Hops from the root drawn when the answer is past `limit`; null: the most that fit. */
  level: number | null;
  /** The node whose details the side panel shows. */
  selected: string;
}

export const DEFAULT_DEPTH = 4;
export const DEFAULT_MAX_NODES = 1000;
/**
 * The most nodes one answer may hold: a bigger neighbourhood is reached by expanding the
 * nodes an answer cut (each expansion a bounded answer of its own), never by one giant answer.
 */
export const MAX_NODES_CAP = 2000;
/**
 * Past this many nodes an answer is drawn a few hops at a time. 2,000 nodes draw in well under
 * a second of CPU and pan smoothly; 10,000 take ~3 s and ~40 ms a frame (docs/ui.md).
 */
export const DEFAULT_LIMIT = 2000;

function whole(value: string | null, fallback: number): number {
  const parsed = Number(value);
  return value !== null && value !== "" && Number.isFinite(parsed) && parsed >= 0 ? Math.floor(parsed) : fallback;
}

export function readState(url: URL): ViewState {
  const p = url.searchParams;
  const level = p.get("level");
  return {
    nodeId: p.get("nodeId") ?? "",
    direction: p.get("direction") ?? "both",
    depth: whole(p.get("depth"), DEFAULT_DEPTH),
    maxNodes: Math.min(whole(p.get("maxNodes"), DEFAULT_MAX_NODES) || DEFAULT_MAX_NODES, MAX_NODES_CAP),
    asOf: p.get("asOf") ?? "",
    expansions: p.getAll("x").flatMap((value) => {
      const [direction, depth, ...rest] = value.split(":");
      if (!["upstream", "downstream", "both"].includes(direction)) return [];
      return [{ direction: direction as Expansion["direction"], depth: Number(depth) || 1, nodeId: rest.join(":") }];
    }),
    from: p.get("from") ?? "",
    to: p.get("to") ?? "",
    collapse: p.get("collapse") === "1",
    open: p.getAll("open"),
    limit: whole(p.get("limit"), DEFAULT_LIMIT),
    level: level === null ? null : whole(level, 1),
    selected: p.get("selected") ?? "",
  };
}

export function writeState(state: ViewState): string {
  const p = new URLSearchParams({ nodeId: state.nodeId, direction: state.direction, depth: String(state.depth) });
  if (state.maxNodes !== DEFAULT_MAX_NODES) p.set("maxNodes", String(state.maxNodes));
  if (state.asOf) p.set("asOf", state.asOf);
  for (const x of state.expansions) p.append("x", `${x.direction}:${x.depth}:${x.nodeId}`);
  if (state.from) p.set("from", state.from);
  if (state.to) p.set("to", state.to);
  if (state.collapse) p.set("collapse", "1");
  for (const id of state.open) p.append("open", id);
  if (state.limit !== DEFAULT_LIMIT) p.set("limit", String(state.limit));
  if (state.level !== null) p.set("level", String(state.level));
  if (state.selected) p.set("selected", state.selected);
  return `/lineage?${p}`;
}
