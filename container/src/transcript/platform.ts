/**
 * Source 3: subtitles the platform publishes, through yt-dlp. The download
 * already left the platform's metadata in source.info.json; a second, light
 * yt-dlp run (--load-info-json, --skip-download) fetches one subtitle file
 * from it. Uploaded subtitles win over automatic ones; the language is the
 * video's own when the platform names it, else English, else the first
 * uploaded track. Automatic tracks machine-translated into other languages
 * are never chosen.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { runProcess } from "../shared/spawn.ts";
import { MAX_CAPTIONS_BYTES, decodeCaptionBytes, parseCaptions, type Cue } from "./cues.ts";

const INFO_JSON = "source.info.json";
const OUTPUT_STEM = "platform-subs";
const TIMEOUT_MS = 120_000;

interface InfoJson {
  language?: unknown;
  subtitles?: Record<string, unknown>;
  automatic_captions?: Record<string, unknown>;
}

export interface SubtitleChoice {
  language: string;
  automatic: boolean;
}

/** Which track to ask for, from the platform's metadata; null when it lists none. */
export function chooseSubtitles(info: InfoJson): SubtitleChoice | null {
  const uploaded = Object.keys(info.subtitles ?? {}).filter((l) => l !== "live_chat");
  const automatic = Object.keys(info.automatic_captions ?? {});
  const spoken = typeof info.language === "string" && info.language !== "" ? info.language : null;
  const matches = (list: string[], lang: string) => list.find((l) => l === lang) ?? list.find((l) => l.startsWith(`${lang}-`));
  if (spoken) {
    const exact = matches(uploaded, spoken);
    if (exact) return { language: exact, automatic: false };
    const original = automatic.find((l) => l === `${spoken}-orig`) ?? matches(automatic, spoken);
    if (original) return { language: original, automatic: true };
  }
  const english = matches(uploaded, "en");
  if (english) return { language: english, automatic: false };
  if (uploaded[0]) return { language: uploaded[0], automatic: false };
  // Without a known spoken language, only an "-orig" automatic track is surely not a translation.
  const original = automatic.find((l) => l.endsWith("-orig"));
  if (original) return { language: original, automatic: true };
  return null;
}

export function buildSubtitleArgs(workDir: string, choice: SubtitleChoice): string[] {
  return [
    "--ignore-config",
    "--no-cache-dir",
    "--skip-download",
    "--load-info-json",
    path.join(workDir, INFO_JSON),
    choice.automatic ? "--write-auto-subs" : "--write-subs",
    "--sub-langs",
    // A language code is data, never a regex or an option.
    choice.language.replace(/[^A-Za-z0-9_-]/g, ""),
    "--sub-format",
    "vtt/srt/best",
    "--socket-timeout",
    "30",
    "--paths",
    workDir,
    "-o",
    `${OUTPUT_STEM}.%(ext)s`,
  ];
}

export interface PlatformSubtitles {
  cues: Cue[];
  language: string;
  automatic: boolean;
}

export async function platformSubtitles(ytdlpPath: string, workDir: string, signal: AbortSignal): Promise<{ found: PlatformSubtitles | null; note: string }> {
  let info: InfoJson;
  try {
    info = JSON.parse(await readFile(path.join(workDir, INFO_JSON), "utf8")) as InfoJson;
  } catch {
    return { found: null, note: "the platform gave no metadata" };
  }
  const choice = chooseSubtitles(info);
  if (!choice) return { found: null, note: "the platform has no subtitles for this video" };
  const result = await runProcess({ command: ytdlpPath, args: buildSubtitleArgs(workDir, choice), timeoutMs: TIMEOUT_MS, signal, cwd: workDir });
  const file = (await readdir(workDir)).find((n) => n.startsWith(`${OUTPUT_STEM}.`) && /\.(vtt|srt)$/.test(n));
  if (result.exitCode !== 0 || !file) return { found: null, note: "the platform's subtitles could not be downloaded" };
  const full = path.join(workDir, file);
  if ((await stat(full)).size > MAX_CAPTIONS_BYTES) return { found: null, note: "the platform's subtitles are too large" };
  try {
    const cues = parseCaptions(decodeCaptionBytes(await readFile(full))).cues;
    return { found: { cues, language: choice.language.replace(/-orig$/, ""), automatic: choice.automatic }, note: "platform subtitles" };
  } catch (error) {
    return { found: null, note: `the platform's subtitles are unusable (${error instanceof Error ? error.message : String(error)})` };
  }
}
