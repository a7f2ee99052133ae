// Tag badges on the graph: a dataset box (or a column view's dataset group) shows the tags
// put on it or its columns, and, marked ↳, those that reached it along column lineage; in
// the column view each column shows its own.
import type cytoscape from "cytoscape";

import { classificationApi, type Badges, type DatasetBadges } from "../classification";
import { fitLine } from "../graph/labels";

/** The badges of every tagged dataset (as of the explorer's time); none when the server cannot say. */
export async function fetchBadges(asOf?: string): Promise<DatasetBadges | null> {
  try {
    return await classificationApi.badges(asOf);
  } catch {
    return null; // an older server or a failed request: the graph stays unbadged
  }
}

/** One line of badges: direct tags, then the propagated ones not also direct. */
export function badgeLine(tags: string[], propagated: string[]): string {
  const own = new Set(tags);
  return [...tags, ...propagated.filter((t) => !own.has(t)).map((t) => `↳${t}`)].join(" · ");
}

export function decorateTags(cy: cytoscape.Core, badges: DatasetBadges | null): void {
  if (!badges) return;
  const byId = new Map<string, Badges>(badges.datasets.flatMap((d): [string, Badges][] =>
    [[d.nodeId, d], ...d.columns.map((c): [string, Badges] => [c.nodeId, c])]));
  cy.batch(() => {
    cy.nodes("[kind = 'DATASET'], [kind = 'DATASET_FIELD']").forEach((node) => {
      const found = byId.get(node.id());
      if (!found) return;
      const line = badgeLine(found.tags, found.propagatedTags);
      node.data({ badges: line, label: `${node.data("label")}\n${fitLine(line, 11)}`, full: `${node.data("full")}\n${line}` });
      node.addClass(found.propagatedTags.length ? "tagged propagated" : "tagged");
    });
  });
}
