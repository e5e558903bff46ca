/** Command line of `npm run demo -- [path-or-url] [--type <video_type>] [--config <preset>]`. */
import { VIDEO_TYPES, type ClipConfig, type VideoType } from "#contract";

/** Saved configurations the demo can create on its fresh account (`--config <name>`). */
export const CONFIG_PRESETS: Record<string, Partial<ClipConfig>> = {
  vertical: {},
  "vertical-720": { resolution: 720 },
  square: { aspect_ratio: "1:1", resolution: 720 },
  portrait: { aspect_ratio: "4:5", resolution: 1080 },
  landscape: { aspect_ratio: "16:9", resolution: 720 },
  original: { aspect_ratio: "original", resolution: 720 },
  // Reframing (the default is auto: faces, fit or activity, docs/framing.md).
  faces: { reframe: "faces" },
  fit: { reframe: "fit" },
  center: { reframe: "center" },
  /** What the demo picks on the WebAssembly backend: fewer, smaller, shorter clips. */
  light: { resolution: 720, max_clips: 3, max_clip_seconds: 20 },
};

/** The preset used on the WebAssembly backend when no --config is given. */
export const WASM_CONFIG = "light";

export interface DemoArgs {
  /** A file path or an http(s) URL; undefined means the generated sample. */
  source: string | undefined;
  videoType: VideoType;
  configName: string | undefined;
  /** Keep the stack up after the table (until Ctrl-C), so the clip URLs stay live. */
  keep: boolean;
}

export const USAGE = `Usage: npm run demo -- [path/or/url] [--type <${VIDEO_TYPES.join("|")}>] [--config <${Object.keys(CONFIG_PRESETS).join("|")}>] [--keep]`;

export class UsageError extends Error {}

function isVideoType(value: string): value is VideoType {
  return (VIDEO_TYPES as readonly string[]).includes(value);
}

export function parseDemoArgs(argv: string[]): DemoArgs {
  let source: string | undefined;
  let videoType: VideoType | undefined;
  let configName: string | undefined;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] = arg.startsWith("--") ? arg.split("=", 2) : [arg, undefined];
    const value = (): string => {
      const next = inline ?? argv[++i];
      if (next === undefined || next === "") throw new UsageError(`${flag} needs a value.\n${USAGE}`);
      return next;
    };
    if (flag === "--type") {
      const type = value();
      if (!isVideoType(type)) throw new UsageError(`Unknown video type "${type}". Allowed: ${VIDEO_TYPES.join(", ")}.`);
      videoType = type;
    } else if (flag === "--config") {
      const name = value();
      if (!(name in CONFIG_PRESETS)) throw new UsageError(`Unknown configuration "${name}". Allowed: ${Object.keys(CONFIG_PRESETS).join(", ")}.`);
      configName = name;
    } else if (flag === "--keep") {
      keep = true;
    } else if (flag === "--help" || flag === "-h") {
      throw new UsageError(USAGE);
    } else if (arg.startsWith("-")) {
      throw new UsageError(`Unknown option ${arg}.\n${USAGE}`);
    } else if (source === undefined) {
      source = arg;
    } else {
      throw new UsageError(`Only one video can be given (got "${source}" and "${arg}").\n${USAGE}`);
    }
  }
  // The sample has speech, loud moments and scene changes: the general blend suits it.
  return { source, videoType: videoType ?? "general", configName, keep };
}
