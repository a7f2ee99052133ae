// The bearer token of a server that needs one. The page asks for it once, keeps it in
// this tab's sessionStorage (gone when the tab closes; other tabs ask again) and sends it
// as an Authorization header on every API call. No cookie, so another site's page cannot
// make the browser send it (no CSRF); never in a URL, so it is in no history, log or
// Referer.
import { h } from "./dom";
import { render } from "./router";

const KEY = "headwater.token";

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: every call goes without a token
  }
}

/** The headers every API call adds: the token, when the tab holds one. */
export function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function forget(): void {
  sessionStorage.removeItem(KEY);
  showSignedIn();
}

/** A topbar button that forgets the token, shown while the tab holds one. */
export function showSignedIn(): void {
  const slot = document.getElementById("auth-slot");
  if (!slot) return;
  slot.replaceChildren();
  if (!storedToken()) return;
  slot.append(
    h("button", {
      type: "button", class: "forget-token", "data-testid": "forget-token",
      title: "Forget the token this tab keeps",
      onclick: () => {
        forget();
        // A reload drops what the page holds from the server (the lineage view keeps
        // answers in memory), so nothing read with the token stays on screen.
        window.location.reload();
      },
    }, "forget token"),
  );
}

let open: HTMLElement | null = null;

/**
 * The server answered 401: ask for a token (once, however many calls failed). A token
 * the tab held was refused (revoked, mistyped), so it is dropped first.
 */
export function askForToken(serverMessage: string): void {
  const refused = storedToken() !== null;
  if (refused) forget();
  if (open) return;
  const input = h("input", {
    type: "password", name: "token", autocomplete: "off", spellcheck: "false",
    placeholder: "hw_…", "aria-label": "token", "data-testid": "token-input", required: true,
  }) as HTMLInputElement;
  const form = h("form", { class: "token-form card", "data-testid": "token-form" },
    h("h2", {}, "This server needs a token"),
    h("p", {}, refused
      ? "The token this tab held was refused (revoked or mistyped). Enter another one."
      : "Enter a token with the read scope. It is kept in this tab only, until the tab closes."),
    h("p", { class: "muted mono" }, serverMessage),
    input,
    h("button", { type: "submit" }, "Use token"),
  );
  form.addEventListener("submit", (event) => {
    // Never submitted: the token must not become a URL or a request body.
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    sessionStorage.setItem(KEY, token);
    overlay.remove();
    open = null;
    showSignedIn();
    void render();
  });
  const overlay = h("div", { class: "token-overlay", role: "dialog", "aria-modal": "true", "aria-label": "API token" }, form);
  open = overlay;
  document.body.append(overlay);
  input.focus();
}
