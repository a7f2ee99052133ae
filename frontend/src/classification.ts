// Tags and propagated tags as /api/v2/classification answers them: for the dataset page's
// classification section and the graph's badges.
import "./classification.css";
import { getJson } from "./api";

export interface Hop {
  source: string;
  target: string;
  job: string;
  transformationType: string;
  transformationSubtype: string;
  masking: boolean;
}

export interface PropagatedTag {
  column: string;
  tag: string;
  origin: string;
  path: Hop[];
  explanation: string;
}

export interface StoppedTag {
  tag: string;
  origin: string;
  edge: Hop;
  reason: "masking" | "blocked" | string;
  block: number | null;
}

export interface ColumnClassification {
  nodeId: string;
  field: string;
  tags: string[];
  propagated: PropagatedTag[];
  stopped: StoppedTag[];
}

export interface Classification {
  nodeId: string;
  asOf: string | null;
  tags: { tag: string; subject: string; source: string | null; createdAt: string }[];
  propagatedTags: string[];
  columns: ColumnClassification[];
  truncated: boolean;
}

export interface Badges {
  nodeId: string;
  tags: string[];
  propagatedTags: string[];
}

export interface DatasetBadges {
  asOf: string | null;
  truncated: boolean;
  datasets: (Badges & { columns: Badges[] })[];
}

export const classificationApi = {
  of: (nodeId: string, asOf?: string) => getJson<Classification>("/api/v2/classification", { nodeId, asOf }),
  badges: (asOf?: string) => getJson<DatasetBadges>("/api/v2/classification/datasets", { asOf }),
};
