/**
 * A small JSON Schema (draft 2020-12) checker for exactly the keywords the
 * service's OpenAPI document uses (type, properties, required,
 * additionalProperties, items, enum, const, anyOf, oneOf, allOf, $ref,
 * minimum, maximum, minLength, maxLength, minItems, maxItems, pattern, format date-time/uri).
 * An unknown keyword fails loudly, so the document cannot outgrow the check.
 */
export type Schema = { [keyword: string]: unknown };

const IGNORED = new Set(["description", "default", "title", "examples", "$schema", "id"]);
const HANDLED = new Set([
  "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "oneOf", "allOf",
  "$ref", "minimum", "maximum", "minLength", "maxLength", "pattern", "format", "exclusiveMinimum", "exclusiveMaximum",
  "minItems", "maxItems",
]);

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

function equalJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class SchemaChecker {
  constructor(private readonly root: Schema) {}

  private resolve(ref: string): Schema {
    if (!ref.startsWith("#/")) throw new Error(`unsupported $ref ${ref}`);
    let node: unknown = this.root;
    for (const part of ref.slice(2).split("/")) node = (node as Record<string, unknown>)[part];
    if (!node || typeof node !== "object") throw new Error(`dangling $ref ${ref}`);
    return node as Schema;
  }

  /** Every violation, as "path: problem"; empty when the value matches. */
  check(schema: Schema | boolean, value: unknown, path = "$"): string[] {
    if (schema === true) return [];
    if (schema === false) return [`${path}: no value allowed`];
    const errors: string[] = [];
    for (const keyword of Object.keys(schema)) {
      if (!HANDLED.has(keyword) && !IGNORED.has(keyword)) throw new Error(`schema keyword ${keyword} is not supported by the checker`);
    }
    if (typeof schema.$ref === "string") errors.push(...this.check(this.resolve(schema.$ref), value, path));
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
      if (!types.some((t) => matchesType(value, t))) return [...errors, `${path}: expected ${types.join("|")}, got ${typeOf(value)}`];
    }
    if (schema.enum !== undefined && !(schema.enum as unknown[]).some((e) => equalJson(e, value))) {
      errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
    }
    if ("const" in schema && !equalJson(schema.const, value)) errors.push(`${path}: expected const ${JSON.stringify(schema.const)}`);
    if (typeof value === "number") {
      if (typeof schema.minimum === "number" && value < schema.minimum) errors.push(`${path}: below minimum`);
      if (typeof schema.maximum === "number" && value > schema.maximum) errors.push(`${path}: above maximum`);
      if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) errors.push(`${path}: not above exclusiveMinimum`);
      if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) errors.push(`${path}: not below exclusiveMaximum`);
    }
    if (typeof value === "string") {
      const length = [...value].length;
      if (typeof schema.minLength === "number" && length < schema.minLength) errors.push(`${path}: shorter than minLength`);
      if (typeof schema.maxLength === "number" && length > schema.maxLength) errors.push(`${path}: longer than maxLength`);
      if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) errors.push(`${path}: does not match ${schema.pattern}`);
      if (schema.format === "date-time" && Number.isNaN(Date.parse(value))) errors.push(`${path}: not a date-time`);
      if (schema.format === "uri" && !URL.canParse(value)) errors.push(`${path}: not a URI`);
    }
    if (Array.isArray(value)) {
      if (typeof schema.minItems === "number" && value.length < schema.minItems) errors.push(`${path}: fewer than minItems`);
      if (typeof schema.maxItems === "number" && value.length > schema.maxItems) errors.push(`${path}: more than maxItems`);
    }
    if (typeOf(value) === "object") {
      const object = value as Record<string, unknown>;
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      for (const name of (schema.required ?? []) as string[]) if (!(name in object)) errors.push(`${path}.${name}: required`);
      for (const [name, member] of Object.entries(object)) {
        if (name in properties) errors.push(...this.check(properties[name]!, member, `${path}.${name}`));
        else if (schema.additionalProperties !== undefined) {
          errors.push(...this.check(schema.additionalProperties as Schema | boolean, member, `${path}.${name}`));
        }
      }
    }
    if (Array.isArray(value) && schema.items !== undefined) {
      value.forEach((item, i) => errors.push(...this.check(schema.items as Schema, item, `${path}[${i}]`)));
    }
    for (const part of (schema.allOf ?? []) as Schema[]) errors.push(...this.check(part, value, path));
    if (schema.anyOf !== undefined && !(schema.anyOf as Schema[]).some((part) => this.check(part, value, path).length === 0)) {
      errors.push(`${path}: matches no anyOf branch`);
    }
    if (schema.oneOf !== undefined) {
      const matching = (schema.oneOf as Schema[]).filter((part) => this.check(part, value, path).length === 0).length;
      if (matching !== 1) errors.push(`${path}: matches ${matching} oneOf branches, expected exactly 1`);
    }
    return errors;
  }
}
