/**
 * The layering the code relies on, checked on every source file's imports:
 * - src/contract/ (the service's vocabulary and the Worker <-> engine
 *   channel) imports nothing of the project, so both sides may import it;
 * - src/jobs/ (the job lifecycle) never imports src/engine/ (which drives it);
 * - the engine (container/) reaches the contract only by name, as #contract,
 *   and nothing else of the Worker's src/.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** Every module specifier of a file: static and dynamic imports, re-exports, side-effect imports. */
export function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\b[^'"`;]*?\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

interface Import {
  file: string;
  specifier: string;
  /** The project path a relative specifier points at; null for a package or #contract. */
  target: string | null;
}

function importsOf(files: readonly string[]): Import[] {
  return files.flatMap((file) =>
    specifiers(readFileSync(path.join(root, file), "utf8")).map((specifier) => ({
      file,
      specifier,
      target: specifier.startsWith(".") ? path.normalize(path.join(path.dirname(file), specifier)) : null,
    })),
  );
}

function under(target: string | null, dir: string): boolean {
  return target !== null && (target === dir || target.startsWith(`${dir}${path.sep}`));
}

describe("imports between layers", () => {
  it("finds the imports it checks (a checker that sees none would pass anything)", () => {
    expect(specifiers(`import a from "./a";\nexport * from './b.ts';\nimport "./c";\nconst d = await import("../d");\nimport { type E,\n F } from "#contract";`)).toEqual(
      ["./a", "./b.ts", "#contract", "./c", "../d"],
    );
    expect(importsOf(sourceFiles("src/jobs")).length).toBeGreaterThan(20);
  });

  it("src/contract imports nothing of the project", () => {
    const outside = importsOf(sourceFiles("src/contract")).filter(
      (i) => i.specifier.startsWith("#") || (i.target !== null && !under(i.target, "src/contract")),
    );
    expect(outside).toEqual([]);
  });

  it("src/jobs never imports src/engine", () => {
    expect(importsOf(sourceFiles("src/jobs")).filter((i) => under(i.target, "src/engine"))).toEqual([]);
  });

  it("the engine imports the contract only as #contract, and nothing else of src/", () => {
    const engine = importsOf(sourceFiles("container/src"));
    // What ships in the engine's image: nothing of the Worker.
    expect(engine.filter((i) => under(i.target, "src"))).toEqual([]);
    // The engine's tests may drive the Worker's own code across the channel (container/test/translate-job.test.ts
    // answers /translate with the Worker's translateTexts), but reach the contract by its name too.
    const tests = importsOf(sourceFiles("container/test"));
    expect(tests.filter((i) => under(i.target, "src/contract"))).toEqual([]);
    for (const side of [engine, tests]) expect(side.filter((i) => i.specifier.startsWith("#") && i.specifier !== "#contract")).toEqual([]);
    expect(engine.some((i) => i.specifier === "#contract")).toBe(true);
  });
});
