// Bundles page.jsx with esbuild into DIR/app.js, beside DIR/index.html:
// node build.mjs DIR
import { build } from "esbuild";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2];
if (!out) {
  console.error("usage: node build.mjs DIR");
  process.exit(2);
}
await build({
  entryPoints: [new URL("./page.jsx", import.meta.url).pathname],
  bundle: true,
  format: "esm",
  jsx: "automatic",
  platform: "browser",
  target: "es2022",
  define: { "process.env.NODE_ENV": '"production"' },
  outfile: join(out, "app.js"),
  logLevel: "error",
});
writeFileSync(
  join(out, "index.html"),
  `<!doctype html><html><head><meta charset="utf-8"><title>useStream</title><link rel="icon" href="data:,"></head><body><div id="root"></div><script type="module" src="app.js"></script></body></html>`,
);
