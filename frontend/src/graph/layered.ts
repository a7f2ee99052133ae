// A fast left-to-right layered layout for big lineage graphs.
//
// Why not dagre or ELK for everything: measured on a 760-node synthetic neighbourhood
// (benchmarks/ui_draw.py, docs/ui.md), dagre needs ~3 s of CPU even with its cheapest
// ranker and ELK's layered algorithm ~3 s, both over the 1.5 s budget for a 1,000-node
// first draw. Small graphs still get dagre (its network-simplex ranking and edge routing
// look best); past `LARGE` nodes this does the same phases in near-linear time:
//   1. layers: longest path from the sources (edges closing a cycle are ignored), then
//      sources pulled right next to their first reader;
//   2. order within a layer: a few barycenter sweeps (sort by the mean position of
//      neighbours in the other layers);
//   3. coordinates: x by layer; y placed at the mean of the neighbours' y, then pushed
//      apart to keep the order and spacing.

export interface LayoutInput {
  ids: string[];
  edges: { upstream: string; downstream: string }[];
  size: (id: string) => { width: number; height: number };
  rankSep?: number;
  nodeSep?: number;
  sweeps?: number;
}

export type Positions = Map<string, { x: number; y: number }>;

export function layered(input: LayoutInput): Positions {
  const { ids, size } = input;
  const rankSep = input.rankSep ?? 70;
  const nodeSep = input.nodeSep ?? 16;
  const index = new Map(ids.map((id, i) => [id, i]));
  const n = ids.length;
  const outs: number[][] = Array.from({ length: n }, () => []);
  const ins: number[][] = Array.from({ length: n }, () => []);
  for (const e of input.edges) {
    const a = index.get(e.upstream);
    const b = index.get(e.downstream);
    if (a === undefined || b === undefined || a === b) continue;
    outs[a].push(b);
    ins[b].push(a);
  }

  // 1. Layers. Kahn's algorithm; nodes left on a cycle are released one at a time.
  const rank = new Array<number>(n).fill(0);
  const pending = ins.map((list) => list.length);
  const queue: number[] = [];
  pending.forEach((count, i) => count === 0 && queue.push(i));
  const placed = new Array<boolean>(n).fill(false);
  let done = 0;
  let cursor = 0;
  while (done < n) {
    if (cursor === queue.length) {
      // A cycle: release the unplaced node with the fewest waiting inputs.
      let pick = -1;
      for (let i = 0; i < n; i++) if (!placed[i] && (pick < 0 || pending[i] < pending[pick])) pick = i;
      pending[pick] = 0;
      queue.push(pick);
    }
    const v = queue[cursor++];
    if (placed[v]) continue;
    placed[v] = true;
    done += 1;
    for (const w of outs[v]) {
      if (placed[w]) continue;
      rank[w] = Math.max(rank[w], rank[v] + 1);
      if (--pending[w] === 0) queue.push(w);
    }
  }
  for (let v = 0; v < n; v++) {
    if (ins[v].length === 0 && outs[v].length) rank[v] = Math.max(0, Math.min(...outs[v].map((w) => rank[w])) - 1);
  }

  // 2. Order within layers.
  const layers: number[][] = [];
  const seen = new Set<number>();
  for (const v of queue) {
    if (seen.has(v)) continue;
    seen.add(v);
    (layers[rank[v]] ??= []).push(v);
  }
  for (let r = 0; r < layers.length; r++) layers[r] ??= [];
  const pos = new Array<number>(n).fill(0);
  const renumber = (layer: number[]) => layer.forEach((v, i) => (pos[v] = layer.length > 1 ? i / (layer.length - 1) : 0.5));
  layers.forEach(renumber);
  const sweeps = input.sweeps ?? 4;
  for (let s = 0; s < sweeps; s++) {
    const forward = s % 2 === 0;
    const order = forward ? layers.map((_, i) => i) : layers.map((_, i) => layers.length - 1 - i);
    for (const r of order) {
      const layer = layers[r];
      const key = new Map<number, number>();
      for (const v of layer) {
        const neighbours = forward ? ins[v] : outs[v];
        key.set(v, neighbours.length ? neighbours.reduce((sum, w) => sum + pos[w], 0) / neighbours.length : pos[v]);
      }
      layer.sort((a, b) => key.get(a)! - key.get(b)! || pos[a] - pos[b]);
      renumber(layer);
    }
  }

  // 3. Coordinates.
  const width = Math.max(40, ...ids.map((id) => size(id).width));
  const heights = ids.map((id) => size(id).height);
  const y = new Array<number>(n).fill(0);
  for (const layer of layers) {
    let at = 0;
    for (const v of layer) {
      y[v] = at + heights[v] / 2;
      at += heights[v] + nodeSep;
    }
    const shift = at / 2;
    for (const v of layer) y[v] -= shift;
  }
  const place = (layer: number[], neighboursOf: number[][]) => {
    if (!layer.length) return;
    const desired = layer.map((v) => {
      const list = neighboursOf[v];
      return list.length ? list.reduce((sum, w) => sum + y[w], 0) / list.length : y[v];
    });
    // Keep the order and spacing: push down from the top, then pull up from the bottom.
    const gap = (i: number) => (heights[layer[i - 1]] + heights[layer[i]]) / 2 + nodeSep;
    const down = [...desired];
    for (let i = 1; i < layer.length; i++) down[i] = Math.max(down[i], down[i - 1] + gap(i));
    const up = [...desired];
    for (let i = layer.length - 2; i >= 0; i--) up[i] = Math.min(up[i], up[i + 1] - gap(i + 1));
    const merged = down.map((d, i) => (d + up[i]) / 2);
    for (let i = 1; i < layer.length; i++) merged[i] = Math.max(merged[i], merged[i - 1] + gap(i));
    layer.forEach((v, i) => (y[v] = merged[i]));
  };
  for (let s = 0; s < 2; s++) {
    for (let r = 1; r < layers.length; r++) place(layers[r], ins);
    for (let r = layers.length - 2; r >= 0; r--) place(layers[r], outs);
  }

  const positions: Positions = new Map();
  ids.forEach((id, v) => positions.set(id, { x: rank[v] * (width + rankSep), y: y[v] }));
  return positions;
}
