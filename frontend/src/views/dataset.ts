// The dataset page: current schema, version history with a schema diff between any two
// versions, facets, producing runs, tags, schema drift with its impact and who read it. URL: /datasets/{ns}/{name}?a=<version>&b=<version>
import { api, nodeIds, pageUrl, type DatasetVersion } from "../api";
import { schemaDiff } from "../diff";
import { add, errorBox, facetList, formatDuration, formatTime, h, link, section, stateBadge, table } from "../dom";
import { pagedTable } from "../pager";
import { navigate } from "../router";
import { runIdLink } from "../run-ids";
import { qualitySection } from "./dataset-quality";
import { readersSection } from "./dataset-readers";
import { rootCauseSection } from "./dataset-root-cause";
import { classificationSection } from "./dataset-tags";
import { driftSection } from "./drift";

export async function datasetView(root: HTMLElement, url: URL, namespace: string, name: string): Promise<void> {
  let dataset, versions: DatasetVersion[];
  const classification = classificationSection(nodeIds.dataset(namespace, name));
  const quality = qualitySection(nodeIds.dataset(namespace, name));
  const upstream = rootCauseSection(nodeIds.dataset(namespace, name));
  const drifts = driftSection(nodeIds.dataset(namespace, name));
  const readers = readersSection(nodeIds.dataset(namespace, name));
  try {
    [dataset, { versions }] = await Promise.all([api.dataset(namespace, name), api.datasetVersions(namespace, name)]);
  } catch (error) {
    root.append(errorBox(error));
    return;
  }
  const lineage = pageUrl.lineage(nodeIds.dataset(namespace, name));
  add(root,
    h("div", { class: "page-head" }, h("span", { class: "kind kind-dataset" }, "dataset"), h("h1", {}, name),
      h("p", { class: "muted" }, `namespace ${namespace} · source ${dataset.sourceName} · updated ${formatTime(dataset.updatedAt)}`),
      link(lineage, "view lineage", { class: "button" })),
    dataset.tags.length ? h("p", { class: "tags" }, dataset.tags.map((t) => h("span", { class: "tag" }, t))) : null,
    dataset.description ? h("p", {}, dataset.description) : null,
    section("Current schema", table(["column", "type", "tags", "description", ""], dataset.fields.map((f) => [
      h("span", { class: "mono" }, f.name), f.type ?? "", f.tags.map((t) => h("span", { class: "tag" }, t)), f.description ?? "",
      link(pageUrl.lineage(nodeIds.field(namespace, name, f.name), { depth: "5" }), "column lineage", { "data-field": f.name }),
    ]), { "data-testid": "schema" })),
  );

  const tags = await classification;
  if (tags) root.append(tags);
  const checks = await quality;
  if (checks) root.append(checks);
  // Filled in when it comes: the upstream walk may take longer than the rest of the page.
  const changedSlot = h("div", { class: "root-cause-slot" });
  root.append(changedSlot);
  void upstream.then((changed) => (changed ? changedSlot.replaceWith(changed) : changedSlot.remove()));
  const drifted = await drifts;
  if (drifted) root.append(drifted);
  const read = await readers;
  if (read) root.append(read);

  // Versions: newest first. The diff compares a (older, default the previous) with b (default newest).
  const byId = new Map(versions.map((v) => [v.version, v]));
  const b = byId.get(url.searchParams.get("b") ?? "") ?? versions[0];
  const a = byId.get(url.searchParams.get("a") ?? "") ?? versions[versions.indexOf(b) + 1] ?? b;
  const choose = (which: "a" | "b", value: string) => {
    const next = new URLSearchParams(url.search);
    next.set(which, value);
    navigate(`${url.pathname}?${next}`, true);
  };
  const picker = (which: "a" | "b", selected: DatasetVersion | undefined) =>
    h("select", { "aria-label": `version ${which}`, "data-testid": `version-${which}`, onchange: (e: Event) => choose(which, (e.target as HTMLSelectElement).value) },
      versions.map((v, i) => h("option", { value: v.version, selected: v === selected }, `#${versions.length - i} · ${formatTime(v.createdAt)}`)));
  // Every version, a page at a time from the server; numbered from the oldest (#1).
  const versionList = await pagedTable({
    headers: ["#", "version", "created", "columns", "produced by run", "state", "duration"], noun: "versions",
    attrs: { "data-testid": "versions" },
    fetch: async (limit, offset) => {
      const page = await api.datasetVersions(namespace, name, limit, offset);
      return { totalCount: page.totalCount, rows: page.versions.map((v, i) => [
        page.totalCount - offset - i, h("span", { class: "mono", title: v.version }, v.version.slice(0, 8)), formatTime(v.createdAt), v.fields.length,
        v.createdByRun ? runIdLink(pageUrl.run(v.createdByRun.id), v.createdByRun.id) : "—",
        stateBadge(v.createdByRun?.state), formatDuration(v.createdByRun?.durationMs),
      ]) };
    },
  });
  root.append(section("Versions", versionList,
    versions.length > 1 && a && b ? h("div", { class: "diff" }, h("h3", {}, "Schema diff"),
      h("p", {}, "from ", picker("a", a), " to ", picker("b", b)), diffTable(a, b)) : null));
  root.append(section("Facets", facetList(dataset.facets)));
}

function diffTable(a: DatasetVersion, b: DatasetVersion): HTMLElement {
  const changes = schemaDiff(a.fields, b.fields);
  const changed = changes.filter((c) => c.kind !== "same").length;
  return h("div", { "data-testid": "diff" },
    h("p", { class: "muted" }, changed ? `${changed} change(s)` : "No schema change between these versions."),
    table(["", "column", "type"], changes.map((c) => {
      const sign = { added: "+", removed: "−", type: "~", same: "" }[c.kind];
      const type = c.kind === "type" ? `${c.before ?? "?"} → ${c.after ?? "?"}` : c.type ?? "";
      return [h("span", { class: `diff-${c.kind}` }, sign), h("span", { class: `mono diff-${c.kind}`, "data-change": c.kind }, c.name), type];
    }), { class: "diff-table" }));
}
