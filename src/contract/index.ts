/**
 * The contract of the whole service: its vocabulary (video types, clip
 * configurations, failure codes) and the Worker <-> engine channel (bodies,
 * routes, request signing). It sits at the bottom of src/ and imports nothing
 * of the project, so every other module may import it; both sides import it
 * by name, `#contract` (package.json "imports"), never by a relative path.
 */
export * from "./vocabulary.ts";
export * from "./brand.ts";
export * from "./languages.ts";
export * from "./judgement.ts";
export * from "./channel.ts";
export * from "./signing.ts";
export * from "./platforms.ts";
export * from "./clip-edit.ts";
