// The part of a big answer that is drawn first (issue #6: a 10,000-node neighbourhood must
// stay usable). Drawing every node of a huge answer costs seconds of CPU and makes each
// pan/zoom frame slow, so past a draw limit the explorer shows only the nodes within some
// number of hops of where the user started (the root and each expansion), the largest such
// ring that fits the limit, and says so; "one hop more" and "show all" grow it from there
// without asking the server again (the answer is already in the page).
//
// Hops follow the edges' direction the way the server's walk does: from the root,
// upstream nodes are reached against the edges and downstream nodes along them, never
// sideways through a shared input.

export type WalkDirection = "upstream" | "downstream" | "both";

export interface Source {
  nodeId: string;
  direction: WalkDirection;
}

export interface VisibleView {
  /** The node ids to draw. */
  shown: Set<string>;
  /** Drawn nodes that have neighbours left out (the frontier of the view). */
  frontier: Set<string>;
  /** The hop count shown; null when everything is drawn. */
  level: number | null;
  /** The largest hop count in the answer (what "show all" reaches). */
  maxLevel: number;
}

/** Hops from the nearest source to every node reachable from it, in the source's direction. */
export function hopLevels(ids: string[], edges: { upstream: string; downstream: string }[], sources: Source[]): Map<string, number> {
  const down = new Map<string, string[]>();
  const up = new Map<string, string[]>();
  for (const e of edges) {
    (down.get(e.upstream) ?? down.set(e.upstream, []).get(e.upstream)!).push(e.downstream);
    (up.get(e.downstream) ?? up.set(e.downstream, []).get(e.downstream)!).push(e.upstream);
  }
  const known = new Set(ids);
  const level = new Map<string, number>();
  const walk = (start: string, next: Map<string, string[]>) => {
    // Breadth first: a node is first reached by its fewest hops from `start`.
    const hops = new Map<string, number>([[start, 0]]);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i];
      const here = hops.get(id)!;
      if (here < (level.get(id) ?? Infinity)) level.set(id, here);
      for (const neighbour of next.get(id) ?? []) {
        if (!hops.has(neighbour)) {
          hops.set(neighbour, here + 1);
          queue.push(neighbour);
        }
      }
    }
  };
  for (const source of sources) {
    if (!known.has(source.nodeId)) continue;
    if (source.direction !== "downstream") walk(source.nodeId, up);
    if (source.direction !== "upstream") walk(source.nodeId, down);
  }
  return level;
}

/**
 * The nodes to draw: all of them when they fit `limit` (or `limit` is 0), otherwise the
 * nodes within `level` hops of a source — `level` as asked, or by default the largest
 * that fits the limit (at least one hop, so the root's neighbours always show).
 * `keep` names nodes drawn whatever their level (a highlighted path).
 */
export function visibleView(
  ids: string[],
  edges: { upstream: string; downstream: string }[],
  sources: Source[],
  limit: number,
  askedLevel: number | null,
  keep: Iterable<string> = [],
): VisibleView {
  const levels = hopLevels(ids, edges, sources);
  // A node no source reaches (it came through an edge the walk did not follow) sits after
  // the farthest ring.
  let maxLevel = 0;
  for (const value of levels.values()) maxLevel = Math.max(maxLevel, value);
  const levelOf = (id: string) => levels.get(id) ?? maxLevel + 1;
  const everything = { shown: new Set(ids), frontier: new Set<string>(), level: null, maxLevel };
  if (askedLevel === null && (limit <= 0 || ids.length <= limit)) return everything;

  let level = askedLevel;
  if (level === null) {
    const perLevel = new Array<number>(maxLevel + 2).fill(0);
    for (const id of ids) perLevel[levelOf(id)] += 1;
    let total = 0;
    level = 0;
    for (let hops = 0; hops < perLevel.length; hops++) {
      total += perLevel[hops];
      if (total > limit) break;
      level = hops;
    }
    level = Math.max(1, level);
  }
  if (level >= maxLevel) return everything;
  const shown = new Set(ids.filter((id) => levelOf(id) <= level!));
  for (const id of keep) shown.add(id);
  const frontier = new Set<string>();
  for (const e of edges) {
    if (shown.has(e.upstream) !== shown.has(e.downstream)) frontier.add(shown.has(e.upstream) ? e.upstream : e.downstream);
  }
  return { shown, frontier, level, maxLevel };
}
