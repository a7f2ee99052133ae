// Schema diff between two dataset versions: which columns were added, removed or changed type.
import type { Field } from "./api";

export type FieldChange =
  | { kind: "added"; name: string; type: string | null }
  | { kind: "removed"; name: string; type: string | null }
  | { kind: "type"; name: string; before: string | null; after: string | null }
  | { kind: "same"; name: string; type: string | null };

/** Compare `before` with `after`, in `after`'s column order, removed columns last. */
export function schemaDiff(before: Field[], after: Field[]): FieldChange[] {
  const old = new Map(before.map((f) => [f.name, f]));
  const changes: FieldChange[] = after.map((f): FieldChange => {
    const was = old.get(f.name);
    if (!was) return { kind: "added", name: f.name, type: f.type };
    if ((was.type ?? null) !== (f.type ?? null)) return { kind: "type", name: f.name, before: was.type, after: f.type };
    return { kind: "same", name: f.name, type: f.type };
  });
  const kept = new Set(after.map((f) => f.name));
  for (const f of before) if (!kept.has(f.name)) changes.push({ kind: "removed", name: f.name, type: f.type });
  return changes;
}
