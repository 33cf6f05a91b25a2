// `make web`: bundles the pages' script with its chart library (Observable Plot, from
// package-lock.json) into one file the host serves, so no page loads anything from elsewhere.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));

await build({
  entryPoints: [join(here, "src", "pages.js")],
  outfile: join(here, "..", "arena", "web", "static", "pages.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "eof",
  logLevel: "warning",
});
