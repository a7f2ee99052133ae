// The explorer's legend: what each node shape and colour and each edge line means. Its
// swatches are styled in style.css to match graph/style.ts.
import { h } from "../dom";

const NODE_KINDS: [string, string][] = [
  ["dataset", "dataset (table or files)"],
  ["topic", "topic (Kafka)"],
  ["model", "model (ML)"],
  ["job", "job, edged in its latest run's state"],
  ["run", "run, filled with its state"],
  ["field", "column"],
  ["folded", "folded parent job or run"],
  ["frontier", "more neighbours not drawn"],
  ["truncated", "more neighbours than the answer's maxNodes held: ⋯ truncated — expand"],
  ["failing", "dataset whose newest assertions fail (✗ how many)"],
  ["declared", "job declared by a JobEvent (static lineage: a dashboard, a report), ◇"],
];

const EDGE_KINDS: [string, string][] = [
  ["table", "table lineage (reads and writes)"],
  ["identity", "column, DIRECT: identity"],
  ["transformation", "column, DIRECT: transformation"],
  ["aggregation", "column, DIRECT: aggregation"],
  ["indirect", "column, INDIRECT (filter, join, group by, sort…)"],
];

export function legend(): HTMLElement {
  return h("details", { class: "legend", "data-testid": "legend", open: true },
    h("summary", {}, "legend"),
    h("ul", { class: "legend-list", "aria-label": "node kinds" }, NODE_KINDS.map(([kind, text]) =>
      h("li", { "data-legend": `node:${kind}` }, h("span", { class: `swatch node-${kind}`, "aria-hidden": "true" }), text))),
    h("ul", { class: "legend-list", "aria-label": "edge kinds" }, EDGE_KINDS.map(([kind, text]) =>
      h("li", { "data-legend": `edge:${kind}` }, h("span", { class: `swatch edge-${kind}`, "aria-hidden": "true" }), text))));
}
