// The dataset page's data quality: the latest value of each metric and the last result of
// each assertion, and a small chart per metric (plain SVG drawn here: no chart library, no
// inline styles, so the page stays inside the server's content security policy).
import { getJson } from "../api";
import { formatTime, h, section, table } from "../dom";

interface Point { time: string; runId: string | null; value: number | null; success: boolean | null }
interface Series { metric: string; column: string | null; assertion: string | null; name: string | null; points: Point[] }
interface LatestAssertion {
  assertion: string; column: string | null; name: string | null; success: boolean;
  expected: string | null; actual: string | null; time: string; job: string | null;
}
interface Quality {
  latest: {
    time: string | null;
    metrics: { metric: string; value: number; time: string }[];
    columnMetrics: { column: string; metric: string; value: number; time: string }[];
    assertions: LatestAssertion[];
    failedAssertions: number;
  };
  series: Series[];
}

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 220;
const HEIGHT = 48;

function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) element.setAttribute(key, String(value));
  return element;
}

/** A line of a metric's values, or a row of pass/fail marks of an assertion, oldest left. */
function chart(series: Series): SVGElement {
  const label = series.metric === "assertion" ? `${series.assertion} ${series.column ?? ""}` : `${series.metric} ${series.column ?? ""}`;
  const root = svg("svg", { width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": `history of ${label.trim()}`, class: "quality-chart" });
  const points = series.points;
  const x = (i: number) => (points.length === 1 ? WIDTH / 2 : 6 + (i * (WIDTH - 12)) / (points.length - 1));
  if (series.metric === "assertion") {
    points.forEach((p, i) => {
      const mark = svg("circle", { cx: x(i), cy: HEIGHT / 2, r: 5, class: p.success ? "quality-pass" : "quality-fail", "data-success": String(p.success) });
      const title = svg("title", {});
      title.textContent = `${formatTime(p.time)}: ${p.success ? "passed" : "failed"}`;
      mark.append(title);
      root.append(mark);
    });
    return root;
  }
  const values = points.map((p) => p.value ?? 0);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const y = (v: number) => (high === low ? HEIGHT / 2 : HEIGHT - 6 - ((v - low) * (HEIGHT - 12)) / (high - low));
  root.append(svg("polyline", { points: values.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "quality-line", fill: "none" }));
  values.forEach((v, i) => {
    const dot = svg("circle", { cx: x(i), cy: y(v), r: 2.5, class: "quality-dot" });
    const title = svg("title", {});
    title.textContent = `${formatTime(points[i].time)}: ${v}`;
    dot.append(title);
    root.append(dot);
  });
  return root;
}

/** The section, or null when no producer sent quality facets for the dataset. */
export async function qualitySection(datasetId: string): Promise<HTMLElement | null> {
  let answer: Quality;
  try {
    answer = await getJson<Quality>(`/api/v2/datasets/${encodeURIComponent(datasetId)}/quality`);
  } catch {
    return null; // an older server without the endpoint: the page stays as it was
  }
  if (!answer.series.length) return null;
  const latest = answer.latest;
  const failed = latest.failedAssertions;
  const last = (s: Series) => s.points[s.points.length - 1];
  return section("Data quality",
    h("div", { "data-testid": "quality" },
      h("p", { class: failed ? "quality-summary quality-failing" : "quality-summary", "data-testid": "quality-summary" },
        `${failed} of ${latest.assertions.length} assertions failing · latest ${latest.time ? formatTime(latest.time) : "—"}`),
      table(["measure", "column", "latest", "history"], answer.series.map((s) => [
        s.metric === "assertion" ? `assertion ${s.assertion}` : s.metric,
        h("span", { class: "mono" }, s.column ?? ""),
        s.metric === "assertion"
          ? h("span", { class: last(s).success ? "quality-pass-text" : "quality-fail-text", "data-testid": "assertion-latest" }, last(s).success ? "pass" : "FAIL")
          : String(last(s).value),
        chart(s),
      ]), { "data-testid": "quality-series" })));
}
