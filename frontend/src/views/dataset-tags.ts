// The dataset page's classification: tags put on the dataset and its columns, the tags that
// reached its columns along column lineage (each with where it came from and how), and the
// tags that stopped on the way in (a masking transformation or a user's block).
import { classificationApi, type Classification, type StoppedTag } from "../classification";
import { h, section, table } from "../dom";

const tag = (name: string, propagated = false) =>
  h("span", { class: propagated ? "tag tag-propagated" : "tag", title: propagated ? "propagated along column lineage" : "" },
    propagated ? `↳ ${name}` : name);

function stopped(stop: StoppedTag): string {
  const why = stop.reason === "blocked" ? `blocked (block ${stop.block})` : stop.reason;
  return `${stop.tag} stopped: ${why} in ${stop.edge.job}`;
}

/** The section, or null when nothing on the dataset is tagged or reached by a tag. */
export async function classificationSection(datasetId: string): Promise<HTMLElement | null> {
  let answer: Classification;
  try {
    answer = await classificationApi.of(datasetId);
  } catch {
    return null; // an older server without the endpoint: the page stays as it was
  }
  const columns = answer.columns.filter((c) => c.tags.length || c.propagated.length || c.stopped.length);
  if (!columns.length && !answer.tags.length) return null;
  return section("Classification",
    h("div", { "data-testid": "classification" },
      answer.propagatedTags.length
        ? h("p", { class: "tags", "data-testid": "propagated-tags" }, "Propagated here: ", answer.propagatedTags.map((t) => tag(t, true)))
        : null,
      table(["column", "tags", "propagated from", "stopped"], columns.map((c) => [
        h("span", { class: "mono" }, c.field),
        c.tags.map((t) => tag(t)),
        h("div", {}, c.propagated.map((p) => h("div", { "data-testid": "provenance" }, tag(p.tag, true), " ", p.explanation))),
        h("div", {}, c.stopped.map((s) => h("div", { class: "muted", "data-testid": "stopped" }, stopped(s)))),
      ]))));
}
