// Builds the page into the Python package, so `headwater serve` ships it with no Node at run time.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/static/",
  build: {
    outDir: "../src/headwater/ui/static",
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
});
