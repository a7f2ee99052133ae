// Keyboard use of the graph: the canvas takes focus (Tab), the arrow keys move the selection
// to the nearest node that way (the root first), Enter opens the selected node's page and
// Escape clears the selection.
import type cytoscape from "cytoscape";

const DIRECTIONS: Record<string, [number, number]> = {
  ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowDown: [0, 1], ArrowUp: [0, -1],
};

/** The nearest node from `from` in direction (dx, dy): distance along it plus twice the sideways offset. */
function nearest(cy: cytoscape.Core, from: cytoscape.NodeSingular, [dx, dy]: [number, number]): cytoscape.NodeSingular | null {
  const { x, y } = from.position();
  let best: cytoscape.NodeSingular | null = null;
  let bestScore = Infinity;
  cy.nodes().forEach((node) => {
    if (node.same(from) || node.isParent()) return;
    const p = node.position();
    const along = (p.x - x) * dx + (p.y - y) * dy;
    if (along <= 1) return;
    const score = along + 2 * Math.abs((p.x - x) * dy + (p.y - y) * dx);
    if (score < bestScore) { bestScore = score; best = node; }
  });
  return best;
}

export interface KeyActions {
  rootId: string;
  /** Show a node's details (and remember it as the selection). */
  select: (id: string) => void;
  /** Open the node's page. */
  open: (id: string) => void;
  clear: () => void;
}

export function keyboardNavigation(canvas: HTMLElement, cy: cytoscape.Core, actions: KeyActions): void {
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "application");
  canvas.setAttribute("aria-label", "lineage graph: arrow keys move the selection, Enter opens its page, Escape clears it");
  canvas.addEventListener("keydown", (event: KeyboardEvent) => {
    const current = cy.nodes(":selected").filter((n) => !n.isParent()).first() as cytoscape.NodeSingular;
    if (event.key in DIRECTIONS) {
      const root = cy.getElementById(actions.rootId);
      const next = current.nonempty() ? nearest(cy, current, DIRECTIONS[event.key]) : root.nonempty() ? root : cy.nodes().first();
      if (next && next.nonempty()) {
        cy.nodes().unselect();
        next.select();
        const { x, y } = next.renderedPosition();
        if (x < 40 || y < 30 || x > cy.width() - 40 || y > cy.height() - 30) cy.center(next);
        actions.select(next.id());
      }
      event.preventDefault();
    } else if (event.key === "Enter" && current.nonempty()) {
      actions.open(current.id());
      event.preventDefault();
    } else if (event.key === "Escape") {
      cy.nodes().unselect();
      actions.clear();
    }
  });
}
