/**
 * The Worker's layering (docs/conventions.md "Layers"), checked on every
 * import of src/, type-only imports included (a type is a dependency a
 * reader follows too):
 * - no folder of src/ imports a folder that imports it back, directly or
 *   round a longer circle;
 * - no file of src/ or container/src/ is on a circle of imports;
 * - no import runs from a folder up to a folder of a higher layer.
 * Each failure names the offending imports, file and line.
 */
import { describe, expect, it } from "vitest";
import { circles, importGraph, type Edge } from "./import-graph.ts";

/**
 * Bottom first. A folder may import its own layer (if no circle follows) and
 * the layers below; src/<name>.ts at the root of src/ is a folder of its own.
 */
export const LAYERS: readonly (readonly string[])[] = [
  // (Below them all, the contract package, #contract: nothing of the project.)
  // What every layer above may use: settings, helpers of no domain, the domain's errors and URL rules.
  ["settings", "lib", "domain"],
  // SQL, one module per table.
  ["db"],
  // The domain: what each resource does, free of HTTP.
  ["account", "ai", "configs", "cookies", "fleet", "gate", "jobs", "keys", "logos", "uploads", "webhooks"],
  // Middleware and the one map of problem codes to HTTP.
  ["http"],
  // The doors: routes of the API, the dashboard, MCP, the operator API, the CDN and the engine channel; the queue consumers.
  ["api", "admin", "cdn", "dashboard", "engine", "mcp", "queue"],
  // The public app, then the Worker's entry module.
  ["app"],
  ["index"],
];

/** src/jobs/lifecycle.ts -> jobs; src/app.ts -> app. */
export function folderOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.tsx?$/, "");
}

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

function describeEdge(edge: Edge): string {
  return `${edge.from}:${edge.line} imports ${edge.to} ("${edge.specifier}"${edge.typeOnly ? ", type only" : ""})`;
}

const worker = importGraph(["src"]).filter((edge) => edge.to.startsWith("src/"));
const crossing = worker.filter((edge) => folderOf(edge.from) !== folderOf(edge.to));

/** The imports that close each circle of folders, as readable lines. */
export function folderCircles(edges: readonly Edge[]): string[][] {
  const between = edges.map((edge) => ({ from: folderOf(edge.from), to: folderOf(edge.to) })).filter((arrow) => arrow.from !== arrow.to);
  return circles(between).map((members) =>
    edges.filter((edge) => members.includes(folderOf(edge.from)) && members.includes(folderOf(edge.to)) && folderOf(edge.from) !== folderOf(edge.to)).map(describeEdge),
  );
}

describe("the Worker's layers", () => {
  it("reads the imports it checks, and places every folder of src/ in a layer", () => {
    expect(crossing.length).toBeGreaterThan(100);
    const folders = [...new Set(worker.flatMap((edge) => [folderOf(edge.from), folderOf(edge.to)]))].sort();
    expect(folders.filter((folder) => layerOf(folder) < 0)).toEqual([]);
  });

  it("finds a circle and an upward import where there is one (a checker that sees none would pass anything)", () => {
    const edge = (from: string, to: string): Edge => ({ from, to, specifier: to, line: 1, typeOnly: false });
    expect(folderCircles([edge("src/jobs/a.ts", "src/fleet/b.ts"), edge("src/fleet/c.ts", "src/queue/d.ts"), edge("src/queue/d.ts", "src/jobs/a.ts")])).toHaveLength(1);
    expect(circles([edge("src/a/x.ts", "src/a/y.ts"), edge("src/a/y.ts", "src/a/x.ts")])).toEqual([["src/a/x.ts", "src/a/y.ts"]]);
    expect(layerOf("db")).toBeLessThan(layerOf("jobs"));
  });

  it("has no folder that imports a folder importing it back", () => {
    expect(folderCircles(worker)).toEqual([]);
  });

  it("has no file on a circle of imports, in the Worker or the engine", () => {
    expect(circles(worker)).toEqual([]);
    expect(circles(importGraph(["container/src"]))).toEqual([]);
  });

  it("has no import running up to a higher layer", () => {
    const upward = crossing.filter((edge) => layerOf(folderOf(edge.from)) < layerOf(folderOf(edge.to)));
    expect(upward.map(describeEdge)).toEqual([]);
  });

  it("keeps the domain free of HTTP: no domain folder imports src/http or a door", () => {
    const http = layerOf("http");
    const domain = new Set(LAYERS.slice(0, http).flat());
    const above = new Set(LAYERS.slice(http).flat());
    const leaks = crossing.filter((edge) => domain.has(folderOf(edge.from)) && above.has(folderOf(edge.to)));
    expect(leaks.map(describeEdge)).toEqual([]);
  });

  it("answers the engine channel without the public app", () => {
    const reached = new Set<string>(["src/engine/clip-engine.ts"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const edge of worker) {
        if (reached.has(edge.from) && !edge.typeOnly && !reached.has(edge.to)) {
          reached.add(edge.to);
          grew = true;
        }
      }
    }
    expect(reached.has("src/app.ts")).toBe(false);
    expect(reached.has("src/engine/channel-app.ts")).toBe(true);
  });
});
