// The read API as the page uses it: typed fetch helpers and node-id parsing.
// Node ids are headwater's: dataset:{ns}:{name}, datasetField:{ns}:{name}:{field},
// job:{ns}:{name}, run:{uuid}.
import { askForToken, authHeaders } from "./auth";

export type RunState = "NEW" | "RUNNING" | "COMPLETED" | "FAILED" | "ABORTED";

export interface Transformation {
  type: string;
  subtype: string | null;
  description: string | null;
  masking: boolean;
}

export interface V2Node {
  id: string;
  type: "DATASET" | "DATASET_FIELD" | "JOB" | "RUN" | string;
  data: Record<string, unknown> | null;
}

/** A run as /api/v2/lineage summarises it on job nodes (`data.latestRun`). */
export interface RunSummary {
  id: string;
  state: RunState;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
}

/** `data` of a JOB node in /api/v2/lineage. */
export interface JobNodeData {
  namespace: string;
  name: string;
  version: string | null;
  latestRun?: RunSummary | null;
  parentJob?: { namespace: string; name: string } | null;
}

/** `data` of a RUN node in /api/v2/lineage. */
export interface RunNodeData {
  runId: string;
  /** The run's job (older servers sent its node id). */
  job: { namespace: string; name: string } | string | null;
  state: RunState | null;
  startedAt: string | null;
  endedAt: string | null;
  parentRun?: string | null;
  /** The parent run's job (from the parent facet). */
  parentJob?: { namespace: string; name: string } | null;
}

/** The node id of a run node's job, whichever way the server spelled it. */
export function runJobId(data: RunNodeData | null | undefined): string | null {
  const job = data?.job;
  if (!job) return null;
  return typeof job === "string" ? job : nodeIds.job(job.namespace, job.name);
}

export interface V2Edge {
  upstream: string;
  downstream: string;
  via: string | null;
  transformations: Transformation[];
}

export interface V2Graph {
  nodeId: string;
  truncated: boolean;
  /** Nodes of the answer with a neighbour maxNodes left out (absent from older servers). */
  truncatedNodes?: string[];
  nodes: V2Node[];
  edges: V2Edge[];
}

export interface DatasetId {
  namespace: string;
  name: string;
}

export interface Field {
  name: string;
  type: string | null;
  tags: string[];
  description: string | null;
}

export interface Run {
  id: string;
  state: RunState;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  jobVersion: { namespace: string; name: string; version: string } | null;
  inputDatasetVersions: { datasetVersionId: DatasetId & { version: string }; facets: Record<string, unknown> }[];
  outputDatasetVersions: { datasetVersionId: DatasetId & { version: string }; facets: Record<string, unknown> }[];
  facets: Record<string, any>;
}

/** A run in a run's list of children: the run and its job. */
export interface ChildRun extends Run {
  job: { namespace: string; name: string };
}

export interface Dataset {
  namespace: string;
  name: string;
  type: string;
  sourceName: string;
  fields: Field[];
  tags: string[];
  createdAt: string;
  updatedAt: string;
  currentVersion: string | null;
  description: string | null;
  facets: Record<string, unknown>;
}

export interface DatasetVersion {
  version: string;
  createdAt: string;
  fields: Field[];
  createdByRun: Run | null;
  facets: Record<string, unknown>;
}

export interface Job {
  namespace: string;
  name: string;
  type: string;
  parentJobName: string | null;
  inputs: DatasetId[];
  outputs: DatasetId[];
  latestRun: Run | null;
  facets: Record<string, any>;
  description: string | null;
  tags: string[];
  updatedAt: string;
}

export interface SearchResult {
  type: "DATASET" | "JOB";
  name: string;
  namespace: string;
  nodeId: string;
  updatedAt: string;
}

/** An API answer that was not 2xx; carries the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// The answers asked for while one view is shown, by URL: parts of a page that need the same
// answer (a list's first page and the version picker beside it, a run's child runs and its
// graph) share one request. A new view starts empty, so moving on shows fresh data.
let viewAnswers = new Map<string, Promise<unknown>>();

/** Start a new view: answers are asked for again. */
export function newView(): void {
  viewAnswers = new Map();
}

export function getJson<T>(path: string, params: Record<string, string | number | boolean | undefined> = {}): Promise<T> {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") query.set(key, String(value));
  }
  const url = query.toString() ? `${path}?${query}` : path;
  const known = viewAnswers.get(url);
  if (known) return known as Promise<T>;
  const answers = viewAnswers;
  const answer = fetchJson<T>(url);
  answers.set(url, answer);
  answer.catch(() => answers.delete(url)); // never keep a failure
  return answer;
}

async function fetchJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { Accept: "application/json", ...authHeaders() } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      if (body && typeof body.error === "string") message = body.error;
    } catch {
      // not JSON: keep the status line
    }
    if (response.status === 401) askForToken(message);
    throw new ApiError(response.status, message);
  }
  return (await response.json()) as T;
}

/** One producer per job namespace, as /api/v2/producers answers. */
export interface Producer {
  producer: string;
  namespace: string;
  firstSeen: string;
  lastSeen: string;
  events: number;
  rejected: number;
  eventsLastHour: number;
  eventsLast24h: number;
  eventsPerHour: number;
  rejectedLast24h: number;
  agent: { runId: string; eventTime: string; figures: Record<string, unknown> } | null;
}

/** A run's liveness, as /api/v2/runs/{id} answers: stale when its producer went silent. */
export interface RunLiveness {
  id: string;
  state: string;
  stale: boolean;
  lastEventAt: string | null;
  heartbeat: { producer: string | null; runningEvents: number; cadenceSeconds: number | null; staleAfterSeconds: number } | null;
}

const enc = encodeURIComponent;

export const api = {
  namespaces: () => getJson<{ namespaces: { name: string }[] }>("/api/v1/namespaces"),
  datasets: (ns: string, limit = 200, offset = 0) =>
    getJson<{ datasets: Dataset[]; totalCount: number }>(`/api/v1/namespaces/${enc(ns)}/datasets`, { limit, offset }),
  dataset: (ns: string, name: string) => getJson<Dataset>(`/api/v1/namespaces/${enc(ns)}/datasets/${enc(name)}`),
  datasetVersions: (ns: string, name: string, limit = 100, offset = 0) =>
    getJson<{ versions: DatasetVersion[]; totalCount: number }>(
      `/api/v1/namespaces/${enc(ns)}/datasets/${enc(name)}/versions`,
      { limit, offset },
    ),
  jobs: (ns: string, limit = 100, offset = 0) =>
    getJson<{ jobs: Job[]; totalCount: number }>(`/api/v1/namespaces/${enc(ns)}/jobs`, { limit, offset }),
  job: (ns: string, name: string) => getJson<Job>(`/api/v1/namespaces/${enc(ns)}/jobs/${enc(name)}`),
  jobRuns: (ns: string, name: string, limit = 50, offset = 0) =>
    getJson<{ runs: Run[]; totalCount: number }>(`/api/v1/namespaces/${enc(ns)}/jobs/${enc(name)}/runs`, { limit, offset }),
  run: (id: string) => getJson<Run>(`/api/v1/jobs/runs/${enc(id)}`),
  runLiveness: (id: string) => getJson<RunLiveness>(`/api/v2/runs/${enc(id)}`),
  runChildren: (id: string, limit = 100, offset = 0) =>
    getJson<{ runs: ChildRun[]; totalCount: number }>(`/api/v1/jobs/runs/${enc(id)}/children`, { limit, offset }),
  producers: () => getJson<{ producers: Producer[] }>("/api/v2/producers"),
  search: (q: string, limit = 10) => getJson<{ totalCount: number; results: SearchResult[] }>("/api/v1/search", { q, limit }),
  lineage: (params: { nodeId: string; direction: string; depth: number; asOf?: string; maxNodes?: number }) =>
    getJson<V2Graph>("/api/v2/lineage", params),
};

export interface ParsedNodeId {
  type: "dataset" | "datasetField" | "job" | "run";
  namespace: string;
  name: string;
  field?: string;
}

// The server's rule (headwater.graph.model): a URI namespace is scheme://host[:port].
const URI_NAMESPACE = /^([A-Za-z][A-Za-z0-9+.\-]*:\/\/[^/:]*(?::\d+)?):([\s\S]+)$/;

/** Split a node id the way the server does (namespaces such as s3://bucket contain ':'). */
export function parseNodeId(id: string): ParsedNodeId {
  const colon = id.indexOf(":");
  const type = id.slice(0, colon) as ParsedNodeId["type"];
  let rest = id.slice(colon + 1);
  if (type === "run") return { type, namespace: "", name: rest };
  const hash = rest.lastIndexOf("#");
  if (hash >= 0) rest = rest.slice(0, hash);
  const match = URI_NAMESPACE.exec(rest);
  const cut = rest.indexOf(":");
  const namespace = match ? match[1] : rest.slice(0, cut);
  const tail = match ? match[2] : rest.slice(cut + 1);
  if (type === "datasetField") {
    const last = tail.lastIndexOf(":");
    return { type, namespace, name: tail.slice(0, last), field: tail.slice(last + 1) };
  }
  return { type, namespace, name: tail };
}

export const nodeIds = {
  dataset: (ns: string, name: string) => `dataset:${ns}:${name}`,
  field: (ns: string, name: string, field: string) => `datasetField:${ns}:${name}:${field}`,
  job: (ns: string, name: string) => `job:${ns}:${name}`,
  run: (id: string) => `run:${id}`,
};

/** The page URL of a dataset, job or run. */
export const pageUrl = {
  dataset: (ns: string, name: string) => `/datasets/${enc(ns)}/${enc(name)}`,
  job: (ns: string, name: string) => `/jobs/${enc(ns)}/${enc(name)}`,
  run: (id: string) => `/runs/${enc(id)}`,
  lineage: (nodeId: string, extra: Record<string, string> = {}) =>
    `/lineage?${new URLSearchParams({ nodeId, ...extra })}`,
  forNode(id: string): string | null {
    const p = parseNodeId(id);
    if (p.type === "dataset" || p.type === "datasetField") return pageUrl.dataset(p.namespace, p.name);
    if (p.type === "job") return pageUrl.job(p.namespace, p.name);
    if (p.type === "run") return pageUrl.run(p.name);
    return null;
  },
};
