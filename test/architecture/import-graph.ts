/**
 * The project's import graph, read with TypeScript's own parser: every static
 * import and re-export, every `import()` and `import("...")` type, resolved to
 * the file it names. The architecture tests draw their rules on it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export const root = path.resolve(import.meta.dirname, "..", "..");

export interface Edge {
  /** Importing file, relative to the repository root, with `/` separators. */
  from: string;
  /** Imported file, same form. */
  to: string;
  specifier: string;
  /** 1-based line of the import in `from`. */
  line: number;
  /** Erased at compile time (`import type`, or every name imported is a type). */
  typeOnly: boolean;
}

function posix(p: string): string {
  return p.split(path.sep).join("/");
}

export function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => posix(path.relative(root, path.join(entry.parentPath, entry.name))))
    .filter((file) => !file.split("/").includes("node_modules"))
    .sort();
}

const ALIASES: Record<string, string> = { "#contract": "contract/src/index.ts", "@clipjobs/contract": "contract/src/index.ts" };

/** The project file a specifier names, or null for a package or a built-in. */
export function resolve(from: string, specifier: string): string | null {
  if (ALIASES[specifier]) return ALIASES[specifier];
  if (!specifier.startsWith(".")) return null;
  const base = posix(path.normalize(path.join(path.dirname(from), specifier)));
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`, base.replace(/\.js$/, ".ts")];
  for (const candidate of candidates) {
    const full = path.join(root, candidate);
    if (existsSync(full) && statSync(full).isFile()) return candidate;
  }
  return base;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  if (!bindings || ts.isNamespaceImport(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

function exportIsTypeOnly(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly);
}

/** The imports of one file's text. */
export function importsOfText(file: string, text: string): Omit<Edge, "to">[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Omit<Edge, "to">[] = [];
  const add = (literal: ts.Node, typeOnly: boolean): void => {
    if (!ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    found.push({ from: file, specifier: literal.text, line, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, importIsTypeOnly(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node.moduleSpecifier, exportIsTypeOnly(node));
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) add(node.arguments[0], false);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import from a file under `dirs` to a project file (packages left out). */
export function importGraph(dirs: readonly string[]): Edge[] {
  return dirs.flatMap(sourceFiles).flatMap((file) =>
    importsOfText(file, readFileSync(path.join(root, file), "utf8")).flatMap((edge) => {
      const to = resolve(file, edge.specifier);
      return to === null ? [] : [{ ...edge, to }];
    }),
  );
}

/** Strongly connected components of more than one node (Tarjan), each sorted, largest first. */
export function circles(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) connect(node);
  return found.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}
