/**
 * The project's words stay about the product and its links stay whole:
 * - no reference to a tracker issue ("issue N", "issue #N", "issues N and
 *   M", with numbers) in code, comments, tests (their names included) or docs: why a line
 *   is there belongs in its comment, how it came to be in the commit message
 *   (docs/conventions.md);
 * - every relative link in every markdown file reaches an existing file, and
 *   its #fragment, if any, a heading of that file.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");

/** Where an issue reference may not appear: folders searched whole, and single files. */
const CHECKED_DIRS = ["src", "container", "client", "scripts", "bench", "test", "docs", ".ci"];
const CHECKED_FILES = ["README.md", "wrangler.toml", "package.json", "vitest.config.ts", "tsconfig.json", "tsconfig.node.json"];
/** Folders that hold what the project does not write: installed packages, builds, generated media, run state. */
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".tmp", ".wrangler", "test-output", ".git", "results"]);

/** "issue N", "Issue #N", "issues N and M", "issue-N" (N a number): the word, then a number. */
const ISSUE_REFERENCE = /\bissues?[\s-]*#?\d/i;

function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    let entries;
    try {
      entries = readdirSync(path.join(root, relative), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // removed since it was listed
      throw error;
    }
    for (const entry of entries) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(child);
      } else if (entry.isFile()) {
        found.push(child);
      }
    }
  };
  walk(dir);
  return found;
}

/**
 * Text files only: a NUL byte in the first 8 KiB marks media, fonts and other binaries. A file another
 * test removed between the listing and the read (a scratch file of a suite running beside this one) is none.
 */
function readText(file: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path.join(root, file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  if (bytes.subarray(0, 8192).includes(0)) return null;
  return bytes.toString("utf8");
}

export function issueReferences(text: string): { line: number; text: string }[] {
  return text
    .split("\n")
    .map((line, index) => ({ line: index + 1, text: line.trim() }))
    .filter((line) => ISSUE_REFERENCE.test(line.text));
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Markdown with its fenced code blocks and inline code spans blanked (links there are examples, not links). */
function withoutCode(markdown: string): string {
  let inFence = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line.replace(/`[^`]*`/g, "");
    })
    .join("\n");
}

/** Every heading's anchor in a markdown file, duplicates numbered as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The targets of a markdown file's inline links, images and reference definitions. */
export function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const targets: string[] = [];
  for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  for (const match of text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$/gm)) targets.push(match[1]!);
  return targets;
}

interface BrokenLink {
  file: string;
  target: string;
  problem: string;
}

function brokenLinks(file: string, markdown: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and other schemes: not this repository's files
    const [pathPart = "", fragment] = target.split("#", 2);
    const decoded = decodeURIComponent(pathPart);
    const resolved = decoded === "" ? file : path.normalize(path.join(path.dirname(file), decoded));
    if (resolved.startsWith("..") || path.isAbsolute(decoded)) {
      broken.push({ file, target, problem: "points outside the repository" });
      continue;
    }
    let isFile: boolean;
    try {
      isFile = statSync(path.join(root, resolved)).isFile();
    } catch {
      broken.push({ file, target, problem: "no such file" });
      continue;
    }
    if (fragment === undefined || fragment === "") continue;
    if (!isFile || !resolved.endsWith(".md")) {
      broken.push({ file, target, problem: "a fragment on something that is not a markdown file" });
      continue;
    }
    const targetText = resolved === file ? markdown : readFileSync(path.join(root, resolved), "utf8");
    if (!anchors(targetText).has(decodeURIComponent(fragment).toLowerCase())) broken.push({ file, target, problem: "no such heading" });
  }
  return broken;
}

describe("the project's words", () => {
  // Written in pieces so that this file itself holds no reference.
  const word = ["iss", "ue"].join("");

  it("recognises an issue reference in its forms, and not the word alone", () => {
    for (const text of [`see ${word} 12`, `(${word} #12)`, `${word}s 12 and 14`, `${word.toUpperCase()} 7`, `${word}-30`]) {
      expect(issueReferences(text), text).toHaveLength(1);
    }
    for (const text of [`${word}Key(12)`, `the ${word} tracker`, `an ${word} of 12 keys`, `${word}s`, "tissue 4"]) {
      expect(issueReferences(text), text).toEqual([]);
    }
  });

  it("finds the files it checks (a checker that reads none would pass anything)", () => {
    const files = CHECKED_DIRS.flatMap(filesUnder);
    expect(files.some((file) => file.startsWith(`src${path.sep}`) && file.endsWith(".ts"))).toBe(true);
    expect(files.some((file) => file.startsWith(`container${path.sep}`))).toBe(true);
    expect(files.some((file) => file.endsWith(".md"))).toBe(true);
    expect(files.length).toBeGreaterThan(300);
  });

  it("no code, comment, test or document refers to a tracker issue", () => {
    const found: string[] = [];
    for (const file of [...CHECKED_DIRS.flatMap(filesUnder), ...CHECKED_FILES]) {
      const text = readText(file);
      if (text === null) continue;
      for (const reference of issueReferences(text)) found.push(`${file}:${reference.line}: ${reference.text.slice(0, 160)}`);
    }
    expect(found).toEqual([]);
  });
});

describe("links between markdown files", () => {
  it("reads headings and links as GitHub does", () => {
    expect(slug("Where a job's objects live")).toBe("where-a-jobs-objects-live");
    expect(slug("The local stack (`scripts/local-stack/`, `test/e2e/dev-command.test.ts`)")).toBe(
      "the-local-stack-scriptslocal-stack-teste2edev-commandtestts",
    );
    expect(slug("bench:fleet, bench:fleet:scheduler, bench:fleet:pool")).toBe("benchfleet-benchfleetscheduler-benchfleetpool");
    expect([...anchors("# A\n## B\n```\n## not a heading\n```\n## B\n")]).toEqual(["a", "b", "b-1"]);
    expect(linkTargets("[a](x.md) ![b](img.png \"t\") `[c](code.md)`\n```\n[d](fenced.md)\n```\n[e]: ref.md\n[f](https://e.com)")).toEqual([
      "x.md",
      "img.png",
      "https://e.com",
      "ref.md",
    ]);
  });

  const markdownFiles = (): string[] =>
    ["", ...CHECKED_DIRS]
      .flatMap((dir) => (dir === "" ? readdirSync(root).filter((name) => name.endsWith(".md")) : filesUnder(dir)))
      .filter((file) => file.endsWith(".md"));

  it("every code fence is closed (an open one hides the rest of its file from readers and from this check)", () => {
    const open = markdownFiles().filter((file) => readFileSync(path.join(root, file), "utf8").split("\n").filter((line) => /^\s*(```|~~~)/.test(line)).length % 2 !== 0);
    expect(open).toEqual([]);
  });

  it("every relative link reaches an existing file and heading", () => {
    const markdown = markdownFiles();
    expect(markdown).toContain("README.md");
    expect(markdown.length).toBeGreaterThan(50);
    const broken = markdown.flatMap((file) => brokenLinks(file, readFileSync(path.join(root, file), "utf8")));
    expect(broken).toEqual([]);
  });
});
