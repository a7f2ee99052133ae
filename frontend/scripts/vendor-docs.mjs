// Copies the API documentation pages' assets (Swagger UI for /docs, ReDoc for /redoc) from
// the npm packages into the Python package, so the pages load nothing from a CDN; and the
// two small scripts that start them (frontend/docs/), since the pages' content security
// policy allows no inline script.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "../src/headwater/ui/static/docs");
const files = [
  ["node_modules/swagger-ui-dist/swagger-ui-bundle.js", "swagger-ui-bundle.js"],
  ["node_modules/swagger-ui-dist/swagger-ui.css", "swagger-ui.css"],
  ["node_modules/swagger-ui-dist/LICENSE", "swagger-ui.LICENSE.txt"],
  ["node_modules/redoc/bundles/redoc.standalone.js", "redoc.standalone.js"],
  ["node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt", "redoc.standalone.js.LICENSE.txt"],
  ["node_modules/redoc/LICENSE", "redoc.LICENSE.txt"],
  ["docs/swagger-init.js", "swagger-init.js"],
  ["docs/redoc-init.js", "redoc-init.js"],
];
mkdirSync(out, { recursive: true });
for (const [from, to] of files) copyFileSync(join(root, from), join(out, to));

// ReDoc's sidebar shows a "powered by" logo fetched from Redocly's CDN (no option turns it
// off); the page loads nothing from outside, so the image gets an empty data: URL instead
// and ReDoc's own onError handler hides it. Fails loudly if an upgrade moves the string.
const redoc = join(out, "redoc.standalone.js");
const logo = 'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"';
const text = readFileSync(redoc, "utf8");
if (text.split(logo).length !== 2) throw new Error(`expected ${logo} once in ${redoc}`);
writeFileSync(redoc, text.replace(logo, 'src:"data:,"'));
console.log(`API docs assets: ${files.length} files in ${out}`);
