/**
 * The contract of the whole service: its vocabulary (video types, clip
 * configurations, failure codes) and the Worker <-> engine channel (bodies,
 * routes, request signing). The package @clipjobs/contract depends on zod
 * alone and imports nothing of the project, so every other package may
 * depend on it; the Worker and the engine import it by name, `#contract`
 * (their package.json "imports" maps it to @clipjobs/contract).
 */
export * from "./vocabulary.ts";
export * from "./brand.ts";
export * from "./languages.ts";
export * from "./judgement.ts";
export * from "./channel.ts";
export * from "./signing.ts";
export * from "./platforms.ts";
export * from "./clip-edit.ts";
