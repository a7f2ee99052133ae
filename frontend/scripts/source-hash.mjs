// Records a hash of the UI sources next to the built page (static/build-info.json), so a
// test can tell when the committed bundle is older than its sources. The same rule is
// reimplemented in tests/ui/test_bundle.py: sorted relative paths, each hashed as
// "<path>\n<bytes>\n".
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const inputs = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "src", "docs"];

function walk(path) {
  if (statSync(path).isDirectory()) {
    return readdirSync(path).flatMap((name) => walk(join(path, name)));
  }
  return [path];
}

const files = inputs
  .flatMap((name) => walk(join(root, name)))
  .map((path) => relative(root, path).split(sep).join("/"))
  .sort();
const hash = createHash("sha256");
for (const file of files) {
  hash.update(`${file}\n`);
  hash.update(readFileSync(join(root, file)));
  hash.update("\n");
}
const info = { sourceHash: hash.digest("hex"), files: files.length };
writeFileSync(join(root, "../src/headwater/ui/static/build-info.json"), JSON.stringify(info, null, 2) + "\n");
console.log(`source hash ${info.sourceHash} over ${info.files} files`);
