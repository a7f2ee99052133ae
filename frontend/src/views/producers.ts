// The producers page: every producer per namespace, when it was last heard from, how many
// events it sent and how many were refused, and a headwater agent's own emission figures,
// so an operator sees a silent or spooling producer before a user does.
import { api, Producer } from "../api";
import { errorBox, formatTime, h, section, table } from "../dom";

/** Hours since `iso`, for the silent-producer hint. */
function hoursSince(iso: string): number {
  return (Date.now() - new Date(iso).getTime()) / 3_600_000;
}

function agentCell(p: Producer): HTMLElement | string {
  const figures = p.agent?.figures;
  if (!figures) return "—";
  const troubled = Number(figures.spooled ?? 0) + Number(figures.dropped ?? 0) + Number(figures.rejected ?? 0) > 0;
  const send = figures.sendMs as { p50?: number | null; p95?: number | null } | undefined;
  return h(
    "span",
    { class: troubled ? "producer-agent warn" : "producer-agent", "data-testid": "agent-figures" },
    `${figures.queued ?? 0} queued, ${figures.sent ?? 0} sent, ${figures.spooled ?? 0} spooled, ` +
      `${figures.dropped ?? 0} dropped; send p50 ${send?.p50 ?? "—"} ms, p95 ${send?.p95 ?? "—"} ms`,
  );
}

export async function producersView(root: HTMLElement): Promise<void> {
  root.append(h("h1", {}, "Producers"), h("p", { class: "muted" },
    "Every producer that sent events, per job namespace. A producer quiet for more than a day is marked silent."));
  try {
    const { producers } = await api.producers();
    if (!producers.length) {
      root.append(h("p", { class: "muted" }, "No events received yet."));
      return;
    }
    const rows = producers.map((p) => {
      const silent = hoursSince(p.lastSeen) > 24;
      return [
        h("span", { class: "producer-uri" }, p.producer || "(none named)"),
        p.namespace || "—",
        h("span", { class: silent ? "state state-failed" : "" }, formatTime(p.lastSeen), silent ? " (silent)" : ""),
        p.eventsLastHour,
        p.eventsPerHour.toFixed(1),
        p.events,
        h("span", { class: p.rejectedLast24h > 0 ? "state state-failed" : "" }, String(p.rejected)),
        agentCell(p),
      ];
    });
    root.append(section(`${producers.length} producer(s)`,
      table(["producer", "namespace", "last seen", "events last hour", "events/hour (24 h)", "events", "refused", "agent"],
        rows, { class: "producers", "data-testid": "producers" })));
  } catch (error) {
    root.append(errorBox(error));
  }
}
