// The explorer's graph state, independent of drawing: merged API answers, path finding
// and the collapsed view. Pure functions over plain data, so they are easy to reason about.
import { nodeIds, type JobNodeData, type RunNodeData, type V2Edge, type V2Graph, type V2Node } from "../api";

export interface DrawNode {
  id: string;
  type: string;
  data: Record<string, unknown> | null;
  /** Node ids folded into this one (collapsed child jobs or child runs). */
  members: string[];
  parent?: string;
}

export interface DrawEdge {
  id: string;
  upstream: string;
  downstream: string;
  via: string | null;
  label: string;
  kind: string;
}

export const edgeKey = (e: { upstream: string; downstream: string; via: string | null }) =>
  `${e.upstream}\u0000${e.downstream}\u0000${e.via ?? ""}`;

/** Every node and edge seen so far, merged from several /api/v2/lineage answers. */
export class LineageModel {
  readonly nodes = new Map<string, V2Node>();
  readonly edges = new Map<string, V2Edge>();
  truncated = false;
  /** Nodes some answer named as having neighbours its maxNodes cut left out. */
  private readonly cutIn = new Set<string>();
  /** Nodes asked about in an answer of their own that did not cut them: nothing is left out. */
  private readonly covered = new Set<string>();

  /** Merge an answer; returns how many nodes were new. */
  merge(graph: V2Graph): number {
    let added = 0;
    const cutHere = new Set(graph.truncatedNodes ?? []);
    for (const id of cutHere) this.cutIn.add(id);
    if (!cutHere.has(graph.nodeId)) this.covered.add(graph.nodeId);
    for (const node of graph.nodes) {
      if (!this.nodes.has(node.id)) added += 1;
      this.nodes.set(node.id, node);
    }
    for (const edge of graph.edges) this.edges.set(edgeKey(edge), edge);
    this.truncated ||= graph.truncated;
    return added;
  }

  /** Whether a node still has neighbours no merged answer holds (expanding it fetches them). */
  isCut(id: string): boolean {
    return this.cutIn.has(id) && !this.covered.has(id);
  }
}

/** The label on a column edge: the transformation's subtype (identity, aggregation, join, …). */
export function transformationLabel(edge: V2Edge): { label: string; kind: string } {
  const first = edge.transformations[0];
  if (!first) return { label: "", kind: "none" };
  const label = edge.transformations
    .map((t) => (t.subtype ?? t.type).toLowerCase() + (t.masking ? " (masked)" : ""))
    .filter((value, index, all) => all.indexOf(value) === index)
    .join(", ");
  return { label, kind: first.type === "INDIRECT" ? "indirect" : (first.subtype ?? "direct").toLowerCase() };
}

/** A node's parent, from the server's node data: a job's parent job, a run's parent run. */
export function parentOf(node: V2Node): string | null {
  if (node.type === "JOB") {
    const parent = (node.data as JobNodeData | null)?.parentJob;
    return parent ? nodeIds.job(parent.namespace, parent.name) : null;
  }
  if (node.type === "RUN") {
    const parent = (node.data as RunNodeData | null)?.parentRun;
    return parent ? nodeIds.run(parent) : null;
  }
  return null;
}

/**
 * Which nodes fold into which (child id -> parent id) when child jobs and runs are collapsed:
 * every node with a parent, except the children of the parents in `open` (unfolded on demand).
 */
export function foldMap(model: LineageModel, open: Iterable<string>): Map<string, string> {
  const unfolded = new Set(open);
  const folds = new Map<string, string>();
  for (const node of model.nodes.values()) {
    const parent = parentOf(node);
    if (parent && !unfolded.has(parent)) folds.set(node.id, parent);
  }
  return folds;
}

/**
 * What a folded parent that is not in the answer itself is known to be from its first child:
 * a run node's `parentJob` is its parent run's job, so the label is right from the first
 * paint (state and times arrive with the parent's own details).
 */
function foldedData(parentId: string, child: V2Node): Record<string, unknown> | null {
  if (child.type !== "RUN") return null;
  const job = (child.data as RunNodeData | null)?.parentJob;
  return job ? { runId: parentId.slice("run:".length), job, state: null, startedAt: null, endedAt: null } : null;
}

/**
 * The node `id` is drawn as: itself, or the top of its parent chain as far as it is known
 * (an action's run -> its application run -> the orchestrator's run), guarding against a
 * cycle in bad data.
 */
export function foldedInto(parentOf: Map<string, string> | null, id: string): string {
  let top = id;
  for (let hops = 0; parentOf?.has(top) && hops < 16; hops++) top = parentOf.get(top)!;
  return top;
}

/**
 * The nodes and edges to draw. With `parentOf` (child id -> parent id), child jobs and runs
 * are folded into their parent: edges are re-pointed at the parent and merged.
 */
export function drawable(model: LineageModel, parentOf: Map<string, string> | null): { nodes: DrawNode[]; edges: DrawEdge[] } {
  const alias = (id: string) => foldedInto(parentOf, id);
  const nodes = new Map<string, DrawNode>();
  for (const node of model.nodes.values()) {
    const id = alias(node.id);
    const existing = nodes.get(id);
    if (existing) {
      if (id !== node.id) existing.members.push(node.id);
      else Object.assign(existing, { type: node.type, data: node.data });
    } else if (id !== node.id) {
      nodes.set(id, { id, type: node.type, data: foldedData(id, node), members: [node.id] });
    } else {
      nodes.set(id, { id, type: node.type, data: node.data, members: [] });
    }
  }
  const edges = new Map<string, DrawEdge>();
  for (const edge of model.edges.values()) {
    const upstream = alias(edge.upstream);
    const downstream = alias(edge.downstream);
    if (upstream === downstream || !nodes.has(upstream) || !nodes.has(downstream)) continue;
    const { label, kind } = transformationLabel(edge);
    const key = edgeKey({ upstream, downstream, via: edge.via });
    if (!edges.has(key)) edges.set(key, { id: `e${edges.size}`, upstream, downstream, via: edge.via, label, kind });
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

function reach(start: string, next: Map<string, string[]>): Set<string> {
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length) {
    for (const neighbour of next.get(stack.pop()!) ?? []) {
      if (!seen.has(neighbour)) {
        seen.add(neighbour);
        stack.push(neighbour);
      }
    }
  }
  return seen;
}

/**
 * Everything on a directed path between `a` and `b`, whichever way the data flows
 * (a -> b first, else b -> a): nodes downstream of the start and upstream of the end.
 */
export function pathBetween(edges: DrawEdge[], a: string, b: string): { nodes: Set<string>; edges: Set<string> } {
  const down = new Map<string, string[]>();
  const up = new Map<string, string[]>();
  for (const e of edges) {
    (down.get(e.upstream) ?? down.set(e.upstream, []).get(e.upstream)!).push(e.downstream);
    (up.get(e.downstream) ?? up.set(e.downstream, []).get(e.downstream)!).push(e.upstream);
  }
  for (const [from, to] of [[a, b], [b, a]]) {
    const after = reach(from, down);
    if (!after.has(to)) continue;
    const before = reach(to, up);
    const nodes = new Set([...after].filter((id) => before.has(id)));
    const onPath = new Set(edges.filter((e) => nodes.has(e.upstream) && nodes.has(e.downstream)).map((e) => e.id));
    return { nodes, edges: onPath };
  }
  return { nodes: new Set(), edges: new Set() };
}

/** A short label for a dataset or job name: the last two path segments of a path-like name. */
export function shortName(name: string): string {
  const parts = name.split("/").filter(Boolean);
  if (parts.length > 2) return parts.slice(-2).join("/");
  return name.length > 48 ? `…${name.slice(-46)}` : name;
}
