/**
 * Request bodies and headers for the fuzz suites: valid bodies derived from
 * the service's zod schemas (through their JSON Schema), near-misses of
 * them, arbitrary JSON, and byte-level malformations.
 */
import fc from "fast-check";
import { z } from "zod";
import { MAX_JSON_BODY_BYTES } from "../../../src/http/body-guard.ts";
import { hostileString } from "./strings.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonSchema = { [keyword: string]: unknown };

/** Any JSON value, with hostile strings as keys and leaves. */
export const jsonValue: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -0, 1e308, -1e308, 2 ** 53 + 1, 0.5, 1e-7),
    hostileString,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 5 }),
  ),
})).value;

/**
 * Valid values for a JSON Schema as z.toJSONSchema writes it (object,
 * properties, required, enum, const, anyOf, integer/number ranges, strings).
 */
export function arbitraryFromSchema(schema: JsonSchema, overrides: Record<string, fc.Arbitrary<Json>> = {}): fc.Arbitrary<Json> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
  if ("const" in schema) return fc.constant(schema.const as Json);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map((s) => arbitraryFromSchema(s)));
  switch (schema.type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      const members = Object.fromEntries(
        Object.entries(properties).map(([name, member]) => [name, overrides[name] ?? arbitraryFromSchema(member)]),
      );
      return fc.record(members, { requiredKeys: required }) as fc.Arbitrary<Json>;
    }
    case "integer":
      return fc.integer({ min: (schema.minimum as number | undefined) ?? -1e6, max: (schema.maximum as number | undefined) ?? 1e6 });
    case "number":
      return fc.double({ min: (schema.minimum as number | undefined) ?? -1e6, max: (schema.maximum as number | undefined) ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "string":
      if (schema.format === "uri") return fc.webUrl();
      return fc.string({ minLength: (schema.minLength as number | undefined) ?? 0, maxLength: (schema.maxLength as number | undefined) ?? 30 });
    default:
      return jsonValue;
  }
}

/** The input JSON Schema of a zod schema (what a client may send). */
export function inputSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
}

/** Values of the wrong JSON type for a field, or just outside its range. */
const wrongValue: fc.Arbitrary<Json> = fc.oneof(
  jsonValue,
  fc.constantFrom<Json>(null, "", "1", true, [], {}, 1.5, -1, 0, 1e9, -1e9, 4, 121, 181, 21, 719, 1081, "720", [720]),
);

/** A near-miss of a valid object: one member removed, retyped, or one unknown member added. */
export function mutatedObject(valid: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  return fc.tuple(valid, fc.nat(), wrongValue, hostileString, fc.constantFrom("drop", "retype", "extra")).map(
    ([value, pick, replacement, extraKey, how]) => {
      if (value === null || typeof value !== "object" || Array.isArray(value)) return replacement;
      const copy: { [key: string]: Json } = { ...value };
      const keys = Object.keys(copy);
      if (how === "extra" || keys.length === 0) {
        copy[extraKey === "" ? "unexpected" : extraKey] = replacement;
        return copy;
      }
      const key = keys[pick % keys.length]!;
      if (how === "drop") delete copy[key];
      else copy[key] = replacement;
      return copy;
    },
  );
}

/** What a fuzzed request carries as its body. */
export interface RawBody {
  kind: string;
  /** undefined: no body at all. */
  payload: string | Uint8Array | undefined;
}

function deepNesting(depth: number, open: string, close: string): string {
  return open.repeat(depth) + close.repeat(depth);
}

/** Byte- and text-level malformations that no JSON serializer would produce. */
export const malformedBody: fc.Arbitrary<RawBody> = fc.oneof(
  fc.constant<RawBody>({ kind: "empty", payload: "" }),
  fc.constant<RawBody>({ kind: "none", payload: undefined }),
  fc.constantFrom("{", "[", '{"a":', "{'a':1}", "{a:1}", "[1,]", '{"a":1,}', "NaN", "undefined", "\uFEFF{}", "{}garbage", "0x10", '"\\uD800"', '"\\u0000"').map(
    (text): RawBody => ({ kind: "malformed-json", payload: text }),
  ),
  fc.integer({ min: 50, max: 7_000 }).chain((depth) =>
    fc.constantFrom<RawBody>(
      { kind: "deep-array", payload: deepNesting(depth, "[", "]") },
      { kind: "deep-object", payload: '{"a":'.repeat(depth) + "1" + "}".repeat(depth) },
    ),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes): RawBody => ({ kind: "binary", payload: bytes })),
  fc.constantFrom(MAX_JSON_BODY_BYTES - 20, MAX_JSON_BODY_BYTES + 1, MAX_JSON_BODY_BYTES * 4, 1_000_000).map(
    (size): RawBody => ({ kind: size > MAX_JSON_BODY_BYTES ? "oversized" : "near-limit", payload: `{"pad":"${"p".repeat(size)}"}` }),
  ),
);

/** A JSON object text with one member written twice (JSON.parse keeps the last). */
export function duplicateKeyBody(valid: fc.Arbitrary<Json>): fc.Arbitrary<RawBody> {
  return fc.tuple(valid, wrongValue, fc.boolean()).map(([value, other, otherFirst]) => {
    if (value === null || typeof value !== "object" || Array.isArray(value) || Object.keys(value).length === 0) {
      return { kind: "duplicate-key", payload: '{"a":1,"a":2}' };
    }
    const [key] = Object.keys(value);
    const rest = JSON.stringify(value).slice(1);
    const first = otherFirst ? other : value[key!]!;
    return { kind: "duplicate-key", payload: `{${JSON.stringify(key)}:${JSON.stringify(first)},${rest}` };
  });
}

/** Valid bodies, their near-misses, arbitrary JSON and malformations, weighted towards the interesting ones. */
export function bodyFor(valid: fc.Arbitrary<Json>, validWeight = 4): fc.Arbitrary<RawBody> {
  return fc.oneof(
    { weight: validWeight, arbitrary: valid.map((v): RawBody => ({ kind: "valid", payload: JSON.stringify(v) })) },
    { weight: 4, arbitrary: mutatedObject(valid).map((v): RawBody => ({ kind: "near-miss", payload: JSON.stringify(v) })) },
    { weight: 2, arbitrary: jsonValue.map((v): RawBody => ({ kind: "random-json", payload: JSON.stringify(v) })) },
    { weight: 1, arbitrary: duplicateKeyBody(valid) },
    { weight: 2, arbitrary: malformedBody },
  );
}

/** Content-Type header values; undefined sends none. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      " application/json ;charset=latin1",
      "text/plain",
      "text/json",
      "application/jsonx",
      "application/problem+json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "",
      "application/json, text/plain",
      "*/*",
    ),
  },
);
