// The search box with suggestions: datasets and jobs by name, from /api/v1/search.
import { api, pageUrl, type SearchResult } from "./api";
import { h } from "./dom";
import { navigate } from "./router";

/** Where a suggestion leads: its lineage graph. */
function target(result: SearchResult): string {
  return pageUrl.lineage(result.nodeId);
}

let boxes = 0;

export function searchBox(placeholder = "Search datasets and jobs…"): HTMLElement {
  // A combobox: the suggestions are its listbox, the active one named by aria-activedescendant.
  const listId = `suggestions-${++boxes}`;
  const input = h("input", { type: "search", placeholder, "aria-label": "Search", class: "search-input", autocomplete: "off",
    role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": listId }) as HTMLInputElement;
  const list = h("ul", { class: "suggestions", role: "listbox", id: listId, "aria-label": "suggestions", hidden: true });
  let results: SearchResult[] = [];
  let active = -1;
  let timer = 0;
  let asked = 0;

  const show = () => {
    list.replaceChildren(
      ...results.map((result, index) =>
        h("li", { role: "option", id: `${listId}-${index}`, "aria-selected": index === active ? "true" : "false",
          class: index === active ? "active" : "", "data-node-id": result.nodeId,
          onmousedown: (event: MouseEvent) => { event.preventDefault(); choose(index); } },
          h("span", { class: `kind kind-${result.type.toLowerCase()}` }, result.type === "JOB" ? "job" : "dataset"),
          h("span", { class: "name" }, result.name),
          h("span", { class: "ns" }, result.namespace)),
      ),
    );
    list.hidden = results.length === 0;
    input.setAttribute("aria-expanded", String(!list.hidden));
    if (active >= 0 && results[active]) input.setAttribute("aria-activedescendant", `${listId}-${active}`);
    else input.removeAttribute("aria-activedescendant");
  };
  const choose = (index: number) => {
    const chosen = results[index];
    list.hidden = true;
    if (chosen) {
      input.value = "";
      navigate(target(chosen));
    } else if (input.value.trim()) {
      navigate(`/search?q=${encodeURIComponent(input.value.trim())}`);
    }
  };
  input.addEventListener("input", () => {
    window.clearTimeout(timer);
    const q = input.value.trim();
    if (!q) { results = []; show(); return; }
    timer = window.setTimeout(async () => {
      const ticket = ++asked;
      try {
        const answer = await api.search(q, 10);
        if (ticket !== asked) return; // a newer keystroke already asked
        results = answer.results;
        active = -1;
        show();
      } catch {
        results = [];
        show();
      }
    }, 120);
  });
  input.addEventListener("keydown", (event: KeyboardEvent) => {
    if (event.key === "ArrowDown") { active = Math.min(results.length - 1, active + 1); show(); event.preventDefault(); }
    else if (event.key === "ArrowUp") { active = Math.max(-1, active - 1); show(); event.preventDefault(); }
    else if (event.key === "Enter") { choose(active); event.preventDefault(); }
    else if (event.key === "Escape") { list.hidden = true; input.setAttribute("aria-expanded", "false"); }
  });
  input.addEventListener("blur", () => { list.hidden = true; input.setAttribute("aria-expanded", "false"); });
  return h("div", { class: "search-box" }, input, list);
}
