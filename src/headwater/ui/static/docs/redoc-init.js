// ReDoc for /openapi.json, fetched with the token the web UI keeps in this tab
// (sessionStorage), since the document needs the read scope on a server with tokens.
const TOKEN_KEY = "headwater.token";
const root = document.getElementById("redoc");

async function show() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const response = await fetch("/openapi.json", {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  if (!response.ok) {
    const message = document.createElement("p");
    message.className = "docs-error";
    message.textContent = response.status === 401 || response.status === 403
      ? `This server needs a token with the read scope (${response.status}): open the web UI at /, enter one, then come back in the same tab.`
      : `The API document could not be read: ${response.status} ${response.statusText}`;
    root.replaceChildren(message);
    return;
  }
  Redoc.init(await response.json(), {}, root);
}

void show();
