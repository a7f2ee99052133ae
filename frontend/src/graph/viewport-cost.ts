// What keeps a big graph's cost tied to what is on screen rather than to the whole graph.
//
// Labels near the view only: Cytoscape.js measures every label (a canvas font change and a
// measureText per line) when it styles a node, and a big graph opens at a zoom that shows a
// few hundred of its thousands of nodes. So nodes far from the view start without their
// label (class `offscreen`) and get it, for good, as soon as the view comes within half a
// view of them; the `viewport` event fires before the frame is drawn, so a node on screen is
// never drawn without its label.
//
// No layer texture that cannot exist: Cytoscape.js first tries to draw the whole graph into
// one texture (its layered texture cache), which it refuses past 4000 × 4000 pixels, but
// only after computing the bounding box of every element — on every frame whose zoom
// differs. A big graph at a readable zoom is always past that size, so the cache is skipped
// up front and the renderer goes straight to drawing the elements in view.
import type cytoscape from "cytoscape";

/** Grid cell size in graph units for finding the nodes near the view. */
const CELL = 400;
/** Cytoscape.js's limits on a layer texture (its LayeredTextureCache, cytoscape 3.34). */
const LAYER = { minLevel: -4, maxLevel: 2, maxZoom: 3.99, maxDim: 32767, maxArea: 4000 * 4000 };

/** The class that leaves a node's label out until the view comes near it. */
export const OFFSCREEN = "offscreen";

/**
 * Gives `offscreen` nodes their label once the view comes near them. Call after the first
 * fit or centring; it then follows every pan and zoom.
 */
export function labelNearView(cy: cytoscape.Core): void {
  const cells = new Map<string, cytoscape.NodeSingular[]>();
  cy.nodes(`.${OFFSCREEN}`).forEach((node) => {
    const { x, y } = node.position();
    const key = `${Math.floor(x / CELL)},${Math.floor(y / CELL)}`;
    const cell = cells.get(key);
    if (cell) cell.push(node);
    else cells.set(key, [node]);
  });
  const update = () => {
    if (!cells.size) return;
    const view = cy.extent();
    const marginX = view.w / 2 + CELL, marginY = view.h / 2 + CELL;
    const x1 = Math.floor((view.x1 - marginX) / CELL), x2 = Math.floor((view.x2 + marginX) / CELL);
    const y1 = Math.floor((view.y1 - marginY) / CELL), y2 = Math.floor((view.y2 + marginY) / CELL);
    const near: cytoscape.NodeSingular[] = [];
    // Whichever is fewer: the cells in range, or the cells still holding unlabelled nodes.
    if ((x2 - x1 + 1) * (y2 - y1 + 1) < cells.size) {
      for (let cx = x1; cx <= x2; cx++) {
        for (let cy_ = y1; cy_ <= y2; cy_++) {
          const key = `${cx},${cy_}`;
          const cell = cells.get(key);
          if (cell) { near.push(...cell); cells.delete(key); }
        }
      }
    } else {
      for (const [key, cell] of cells) {
        const [cx, cy_] = key.split(",").map(Number);
        if (cx >= x1 && cx <= x2 && cy_ >= y1 && cy_ <= y2) { near.push(...cell); cells.delete(key); }
      }
    }
    if (near.length) cy.batch(() => { for (const node of near) node.removeClass(OFFSCREEN); });
  };
  update();
  cy.on("viewport", update);
  // A node dragged somewhere else is labelled at once (its cell is where it was).
  cy.on("grab", "node", (event) => { event.target.removeClass(OFFSCREEN); });
}

interface LayerCache {
  getLayers: (eles: unknown, pxRatio: number, level?: number) => unknown;
}

/** Skips Cytoscape.js's whole-graph layer texture at every zoom where it cannot fit. */
export function skipImpossibleLayers(cy: cytoscape.Core): void {
  const renderer = (cy as unknown as { renderer(): { data?: { lyrTxrCache?: LayerCache } } }).renderer();
  const cache = renderer?.data?.lyrTxrCache;
  if (!cache || typeof cache.getLayers !== "function") return;
  const original = cache.getLayers.bind(cache);
  let extent: cytoscape.BoundingBox12 & cytoscape.BoundingBoxWH | null = null;
  cy.on("position add remove", () => { extent = null; });
  cache.getLayers = (eles, pxRatio, level) => {
    const zoom = cy.zoom();
    const lvl = level ?? Math.max(LAYER.minLevel, Math.ceil(Math.log2(zoom * pxRatio)));
    if (zoom < LAYER.maxZoom && lvl <= LAYER.maxLevel) {
      extent ??= cy.elements().boundingBox();
      const scale = 2 ** lvl;
      const w = extent.w * scale, h = extent.h * scale;
      if (w > LAYER.maxDim || h > LAYER.maxDim || w * h > LAYER.maxArea) return null;
    }
    return original(eles, pxRatio, level);
  };
}
