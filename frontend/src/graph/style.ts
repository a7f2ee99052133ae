// How the explorer draws: datasets as rounded boxes, jobs as dark boxes edged in their
// latest run's state colour, runs filled with their state's colour, folded parents with a
// double border, a limited view's frontier dashed, column edges labelled with their
// transformation.
import type cytoscape from "cytoscape";

import { LABEL_FONT_FAMILY } from "./labels";

export const STATE_COLOURS: Record<string, string> = {
  COMPLETED: "#2e9d58",
  FAILED: "#d64545",
  RUNNING: "#2f7dd1",
  ABORTED: "#8a8a8a",
  NEW: "#d9a321",
};

const EDGE_KIND_COLOURS: Record<string, string> = {
  identity: "#2e9d58",
  transformation: "#2f7dd1",
  aggregation: "#9b51e0",
  indirect: "#b0b0b0",
};

export function stylesheet(large: boolean): cytoscape.StylesheetJson {
  return [
    {
      selector: "node",
      style: {
        shape: "round-rectangle",
        width: 170,
        height: 38,
        "background-color": "#e8f1fb",
        "border-width": 1,
        "border-color": "#7aa7d8",
        label: "data(label)",
        "font-size": 11,
        "text-valign": "center",
        "text-halign": "center",
        "text-wrap": "ellipsis",
        "text-max-width": "160px",
        color: "#1c2b3a",
        "font-family": LABEL_FONT_FAMILY,
      },
    },
    {
      selector: "node[kind = 'JOB']",
      style: {
        "background-color": "#33414f",
        "border-color": "data(stateColour)",
        "border-width": 4,
        color: "#ffffff",
        "text-wrap": "wrap",
        "font-size": 10,
        height: 44,
      },
    },
    { selector: "node[kind = 'JOB'][?collapsed]", style: { "border-style": "double", "border-width": 6 } },
    {
      selector: "node[kind = 'RUN']",
      style: { "background-color": "data(stateColour)", "border-color": "#33414f", color: "#fff", "text-wrap": "wrap", "font-size": 10, height: 44 },
    },
    { selector: "node[kind = 'RUN'][?collapsed]", style: { "border-style": "double", "border-width": 6 } },
    {
      selector: "node[kind = 'DATASET_FIELD']",
      style: { width: 150, height: 26, "background-color": "#ffffff", "border-color": "#7aa7d8", "font-size": 11 },
    },
    {
      selector: ":parent",
      style: {
        "background-color": "#f4f7fb",
        "border-color": "#9fb4c9",
        "text-valign": "top",
        "text-halign": "center",
        "font-weight": "bold",
        "padding": "12px",
      },
    },
    // Datasets by their datasetType: Kafka topics and ML models.
    { selector: "node[datasetType = 'TOPIC']", style: { shape: "barrel", "background-color": "#fff4e0", "border-color": "#c77700" } },
    { selector: "node[datasetType = 'MODEL']", style: { shape: "cut-rectangle", "background-color": "#f3eafd", "border-color": "#7d3cc8" } },
    // A limited view's frontier: nodes with neighbours not drawn yet.
    { selector: "node.more", style: { "border-style": "dashed", "border-color": "#9b51e0", "border-width": 3 } },
    // A node whose neighbours the server's maxNodes cut left out: expanding it fetches them.
    { selector: "node.truncated", style: { "text-wrap": "wrap", height: 48, "border-style": "dashed", "border-color": "#c77700", "border-width": 4 } },
    { selector: "node.root", style: { "border-color": "#f08c00", "border-width": 4 } },
    // Tag badges (views/lineage-tags.ts): a second label line, edged red when a tag reached it.
    { selector: "node.tagged", style: { "text-wrap": "wrap", height: 48, "border-width": 2, "border-color": "#c98a1a" } },
    { selector: "node.tagged.propagated", style: { "border-color": "#c0392b" } },
    { selector: "node[kind = 'DATASET_FIELD'].tagged", style: { height: 36 } },
    { selector: "node.declared", style: { "text-wrap": "wrap", height: 44, "border-style": "dotted", "border-width": 4, "border-color": "#00897b" } },
    { selector: "node.failing", style: { "text-wrap": "wrap", height: 48, "border-width": 4, "border-style": "double", "border-color": "#b00020", "background-color": "#fdecec" } },
    { selector: "node:selected", style: { "overlay-color": "#f08c00", "overlay-opacity": 0.25 } },
    {
      selector: "edge",
      style: {
        width: 1.5,
        "line-color": "#9aa5b1",
        "target-arrow-color": "#9aa5b1",
        "target-arrow-shape": "triangle",
        "arrow-scale": 0.8,
        // Haystack edges are the cheapest to draw; in a big graph left-to-right shows direction.
        "curve-style": large ? "haystack" : "bezier",
        ...(large ? { "target-arrow-shape": "none", "haystack-radius": 0 } : {}),
      },
    },
    {
      selector: "edge[label]",
      style: {
        label: "data(label)",
        "font-size": 10,
        "font-family": LABEL_FONT_FAMILY,
        "text-rotation": "autorotate",
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.9,
        "text-background-padding": "2px",
      },
    },
    ...Object.entries(EDGE_KIND_COLOURS).map(([kind, colour]) => ({
      selector: `edge[kind = '${kind}']`,
      style: { "line-color": colour, "target-arrow-color": colour },
    })),
    { selector: "edge[kind = 'indirect']", style: { "line-style": "dashed" } },
    { selector: ".dimmed", style: { opacity: 0.2 } },
    { selector: "node.on-path", style: { "border-color": "#f08c00", "border-width": 4 } },
    // Far from the view, a big graph's node waits for its label (graph/viewport-cost.ts).
    { selector: "node.offscreen", style: { label: "" } },
    { selector: "edge.on-path", style: { "line-color": "#f08c00", "target-arrow-color": "#f08c00", width: 3 } },
  ];
}
