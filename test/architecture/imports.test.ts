/**
 * The repository's packages and what each may import (docs/architecture.md
 * "Packages"), checked on every source file's module specifiers as
 * TypeScript reads them (static and dynamic imports, re-exports, require):
 * - a relative import stays inside the package's own code;
 * - a `#name` import is one of the package's "imports" (package.json), and
 *   counts as an import of the package it maps to;
 * - any other import is a Node or workerd built-in, or a package the
 *   package's manifest declares;
 * - between the project's packages: the contract depends on none, the engine
 *   and the Worker on the contract alone, the client on none.
 * Within the Worker, src/jobs (the job lifecycle) never imports src/engine
 * (which drives it). Every relative import names its file with the extension
 * (docs/conventions.md "Imports").
 */
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { importsOfText } from "./import-graph.ts";

const root = path.resolve(import.meta.dirname, "..", "..");

interface Manifest {
  name: string;
  imports?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8")) as Manifest;
}

const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).includes("node_modules"));
}

/** Every module specifier of a source text, as TypeScript's own pre-processor finds them. */
export function specifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith("node:") || builtinModules.includes(packageName(specifier));
}

interface Import {
  file: string;
  specifier: string;
}

function importsOf(files: readonly string[]): Import[] {
  return files.flatMap((file) => specifiers(readFileSync(path.join(root, file), "utf8")).map((specifier) => ({ file, specifier })));
}

/** The project path a relative specifier of `file` points at. */
function targetOf(i: Import): string {
  return path.normalize(path.join(path.dirname(i.file), i.specifier));
}

function under(target: string, dir: string): boolean {
  return target === dir || target.startsWith(`${dir}${path.sep}`);
}

type DependencyKind = "dependencies" | "devDependencies" | "optionalDependencies" | "peerDependencies";

interface PackageRule {
  /** The package's folder (its package.json). */
  dir: string;
  /** Folders of the package's own code, whose imports are checked. */
  code: string[];
  /** The manifest sections a bare import may be declared in. */
  kinds: DependencyKind[];
  /** Built-ins of the runtime besides Node's (workerd's `cloudflare:` modules). */
  builtin?: (specifier: string) => boolean;
}

const RUNTIME: DependencyKind[] = ["dependencies", "optionalDependencies", "peerDependencies"];

const PACKAGES: Record<string, PackageRule> = {
  contract: { dir: "contract", code: ["contract/src"], kinds: RUNTIME },
  // The engine's image runs a bundle: its devDependencies are built into it (container/package.json's description).
  engine: { dir: "container", code: ["container/src"], kinds: [...RUNTIME, "devDependencies"] },
  client: { dir: "client", code: ["client/src", "client/bin"], kinds: RUNTIME },
  // The code generator runs at development time only.
  "client codegen": { dir: "client", code: ["client/codegen"], kinds: [...RUNTIME, "devDependencies"] },
  worker: { dir: ".", code: ["src"], kinds: RUNTIME, builtin: (s) => s.startsWith("cloudflare:") },
};

/** The imports of a package's code that break its boundary, each with the reason. */
function violations(rule: PackageRule): string[] {
  const manifest = manifestOf(rule.dir);
  const declared = new Set(rule.kinds.flatMap((kind) => Object.keys(manifest[kind] ?? {})));
  const found: string[] = [];
  for (const i of importsOf(rule.code.flatMap(sourceFiles))) {
    const where = `${i.file}: ${i.specifier}`;
    if (i.specifier.startsWith(".")) {
      if (!rule.code.some((dir) => under(targetOf(i), dir))) found.push(`${where} leaves the package's code`);
      continue;
    }
    let bare = i.specifier;
    if (bare.startsWith("#")) {
      const mapped = manifest.imports?.[bare];
      if (mapped === undefined) {
        found.push(`${where} is not in ${rule.dir}/package.json "imports"`);
        continue;
      }
      if (mapped.startsWith("./")) continue;
      bare = mapped;
    }
    if (isBuiltin(bare) || rule.builtin?.(bare)) continue;
    if (!declared.has(packageName(bare))) found.push(`${where}: ${packageName(bare)} is not declared in ${rule.dir}/package.json (${rule.kinds.join(", ")})`);
  }
  return found;
}

/** The project's own packages a manifest names, in the given sections. */
function projectDependencies(dir: string, kinds: DependencyKind[]): string[] {
  const manifest = manifestOf(dir);
  return kinds.flatMap((kind) => Object.keys(manifest[kind] ?? {})).filter((name) => name.startsWith("@clipjobs/")).sort();
}

const ALL: DependencyKind[] = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];

describe("package boundaries", () => {
  it("finds the imports it checks (a checker that sees none would pass anything)", () => {
    expect(
      specifiers(`import a from "./a";\nexport * from './b.ts';\nimport "./c";\nconst d = await import("../d");\nimport { type E,\n F } from "#contract";\nimport type { G } from "g";`),
    ).toEqual(["./a", "./b.ts", "./c", "../d", "#contract", "g"]);
    for (const rule of Object.values(PACKAGES)) expect(importsOf(rule.code.flatMap(sourceFiles)).length, rule.dir).toBeGreaterThan(0);
    // A package that imports what it does not declare is caught.
    expect(violations({ dir: "contract", code: ["src/jobs"], kinds: RUNTIME }).length).toBeGreaterThan(10);
  });

  it("the workspaces are the contract, the engine and the client, beside the Worker at the root", () => {
    expect((manifestOf(".") as Manifest & { workspaces: string[] }).workspaces.sort()).toEqual(["client", "container", "contract"]);
    expect([manifestOf("contract").name, manifestOf("container").name, manifestOf("client").name]).toEqual(["@clipjobs/contract", "@clipjobs/engine", "@clipjobs/client"]);
  });

  it("the contract depends on nothing of the project; the engine and the Worker on the contract alone; the client on nothing", () => {
    expect(projectDependencies("contract", ALL)).toEqual([]);
    expect(projectDependencies("container", ALL)).toEqual(["@clipjobs/contract"]);
    expect(projectDependencies(".", RUNTIME)).toEqual(["@clipjobs/contract"]);
    expect(projectDependencies("client", ALL)).toEqual([]);
    // #contract means the contract package wherever it is used.
    expect(manifestOf(".").imports).toEqual({ "#contract": "@clipjobs/contract" });
    expect(manifestOf("container").imports).toEqual({ "#contract": "@clipjobs/contract" });
  });

  for (const [name, rule] of Object.entries(PACKAGES)) {
    it(`${name}: every import stays in its own code or names a package ${rule.dir}/package.json declares`, () => {
      expect(violations(rule)).toEqual([]);
    });
  }

  it("the engine's tests reach the contract by its name, and never the client", () => {
    const outside = importsOf(sourceFiles("container/test")).filter(
      (i) => (i.specifier.startsWith(".") && (under(targetOf(i), "contract") || under(targetOf(i), "client"))) || (i.specifier.startsWith("#") && i.specifier !== "#contract"),
    );
    expect(outside).toEqual([]);
  });

  it("src/jobs never imports src/engine", () => {
    expect(importsOf(sourceFiles("src/jobs")).filter((i) => i.specifier.startsWith(".") && under(targetOf(i), "src/engine"))).toEqual([]);
  });

  it("every relative import names its file with the extension", () => {
    const dirs = ["src", "test", "contract/src", "container/src", "container/test", "client/src", "client/test", "scripts", "bench"];
    const bare = dirs
      .flatMap(sourceFiles)
      .flatMap((file) => importsOfText(file, readFileSync(path.join(root, file), "utf8")))
      .filter((edge) => edge.specifier.startsWith(".") && !/\.(ts|tsx|mts|js|mjs|json)$/.test(edge.specifier))
      .map((edge) => `${edge.from}:${edge.line} "${edge.specifier}"`);
    expect(bare).toEqual([]);
  });
});
