/**
 * Writes the file extension into every relative import that drops it
 * (docs/conventions.md "Imports"): `"../jobs/submit"` becomes
 * `"../jobs/submit.ts"`, a folder's `"./dashboard"` becomes
 * `"./dashboard/index.ts"`. Only the specifier's text changes.
 *   npx tsx scripts/import-extensions.ts [dir...]   (default: src test bench)
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { importsOfText, resolve, root, sourceFiles } from "../test/architecture/import-graph.ts";

const dirs = process.argv.slice(2);
let changed = 0;
for (const file of (dirs.length > 0 ? dirs : ["src", "test", "bench"]).flatMap(sourceFiles)) {
  const full = path.join(root, file);
  const text = readFileSync(full, "utf8");
  let next = text;
  for (const edge of importsOfText(file, text)) {
    if (!edge.specifier.startsWith(".") || /\.(ts|tsx|mts|js|mjs|json)$/.test(edge.specifier)) continue;
    const target = resolve(file, edge.specifier);
    if (target === null || !/\.tsx?$/.test(target)) throw new Error(`${file}:${edge.line}: cannot resolve "${edge.specifier}"`);
    let spec = path.posix.relative(path.posix.dirname(file), target);
    if (!spec.startsWith(".")) spec = `./${spec}`;
    for (const quote of ['"', "'"]) next = next.split(`${quote}${edge.specifier}${quote}`).join(`${quote}${spec}${quote}`);
  }
  if (next !== text) {
    writeFileSync(full, next);
    changed += 1;
  }
}
console.log(`${changed} files rewritten`);
