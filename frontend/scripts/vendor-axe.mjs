// Copies axe-core (a dev dependency, pinned) into tests/ui/assets/ with its licence: the
// browser tests inject it into every page they scan for accessibility problems, from the
// repository rather than a CDN, so the page's content security policy never sees a new host.
import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const from = fileURLToPath(new URL("../node_modules/axe-core/", import.meta.url));
const to = fileURLToPath(new URL("../../tests/ui/assets/", import.meta.url));
mkdirSync(to, { recursive: true });
copyFileSync(`${from}axe.min.js`, `${to}axe.min.js`);
copyFileSync(`${from}LICENSE`, `${to}axe-core.LICENSE`);
