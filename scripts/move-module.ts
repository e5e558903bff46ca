/**
 * Moves one source file and rewrites every relative import of it (and the
 * moved file's own relative imports) across the repository: the tool behind
 * the move-only commits of docs/conventions.md.
 *   npx tsx scripts/move-module.ts <from> <to>
 * It runs `git mv`, keeps each import's extension style (with or without
 * `.ts`), and rewrites mentions of the old path in comments and docs.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { importsOfText, resolve, root, sourceFiles } from "../test/architecture/import-graph.ts";

const SEARCHED = ["src", "test", "container", "bench", "scripts", "client/src", "client/test"];

function relativeSpecifier(fromFile: string, target: string, keepExtension: boolean): string {
  let spec = path.posix.relative(path.posix.dirname(fromFile), target);
  if (!spec.startsWith(".")) spec = `./${spec}`;
  return keepExtension ? spec : spec.replace(/\.tsx?$/, "").replace(/\/index$/, "");
}

function rewrite(file: string, text: string, moved: (target: string) => string | null, resolveFrom: string): string {
  const edits = importsOfText(file, text)
    .map((edge) => {
      const target = resolve(resolveFrom, edge.specifier);
      const next = target === null || !edge.specifier.startsWith(".") ? null : moved(target);
      return next === null ? null : { old: edge.specifier, next: relativeSpecifier(file, next, /\.tsx?$/.test(edge.specifier)) };
    })
    .filter((edit): edit is { old: string; next: string } => edit !== null && edit.old !== edit.next);
  let out = text;
  for (const edit of edits) {
    out = out.split(`"${edit.old}"`).join(`"${edit.next}"`).split(`'${edit.old}'`).join(`'${edit.next}'`);
  }
  return out;
}

const [from, to] = process.argv.slice(2);
if (!from || !to) throw new Error("usage: move-module.ts <from> <to>");
const files = SEARCHED.flatMap((dir) => sourceFiles(dir)).filter((file) => !file.includes("node_modules"));
// Every import is resolved while the file is still where it was.
const rewritten = files.map((file) => {
  const text = readFileSync(path.join(root, file), "utf8");
  const at = file === from ? to : file;
  // The moved file's own imports resolve from where it was; everyone else's point at it by its new place.
  return { at, text, next: rewrite(at, text, (target) => (target === from ? to : file === from ? target : null), file) };
});
execFileSync("git", ["mv", from, to], { cwd: root });
for (const { at, text, next } of rewritten) if (next !== text || at === to) writeFileSync(path.join(root, at), next);
// Mentions of the path in prose (comments, docs) follow the file.
function filesMentioning(text: string): string[] {
  try {
    return execFileSync("git", ["grep", "-l", "-F", text, "--", "."], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return []; // git grep exits 1 when nothing mentions it
  }
}
const mentions = filesMentioning(from);
for (const file of mentions) {
  const full = path.join(root, file);
  writeFileSync(full, readFileSync(full, "utf8").split(from).join(to));
}
