/**
 * Every parser of outside input runs in time linear in its input. Generated
 * hostile inputs of about 1 MiB (fast-check: short runs of the tokens each
 * grammar cares about, repeated so that a backtracking regex meets them
 * thousands of times) go through the subtitle parsers (SubRip, WebVTT, ASS,
 * the cue text cleaner), the Worker's caption shape check, the tus
 * Upload-Metadata parser and file name, and JSON bodies with the contract's
 * schemas; each parse must finish within a CPU-time budget.
 *
 * The budget is measured robustly: CPU time of this process (not wall time,
 * which a loaded machine stretches), against a linear baseline measured on
 * the same input right before (a few full passes over it), with a wide
 * factor and a floor. A linear parser uses a small multiple of the baseline;
 * the backtracking regexes this replaced took seconds per input (the ASS
 * drawing regex alone about 200 ms per 2,000-character cue of `{\p1`).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ClipConfig, CompleteReport, ProbeReport } from "#contract";
import { z } from "zod";
import {
  CaptionsParseError,
  decodeCaptionBytes,
  parseAss,
  parseCaptions,
  plainCueText,
} from "../../container/src/transcript/cues.ts";
import { looksLikeCaptions } from "../../src/engine/caption-shape.ts";
import { fileNameFromMetadata, parseMetadataHeader } from "../../src/uploads/tus-metadata.ts";

const MIB = 1024 * 1024;
/** Runs per property: each is about 1 MiB of input. */
const RUNS = 25;

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** A few linear passes over the text: what any parser must at least do. */
function baselineMs(text: string): number {
  return cpuMs(() => {
    let sum = 0;
    for (let i = 0; i < text.length; i += 1) sum = (sum + text.charCodeAt(i)) | 0;
    const lines = text.split("\n");
    sum += lines.length + text.toLowerCase().length + text.indexOf("\u0001");
    if (sum === 0.5) throw new Error("unreachable");
  });
}

/** Generous: 60 times the baseline plus a floor, never less than 0.25 s per MiB. */
function budgetMs(text: string): number {
  return Math.max(150 + 60 * baselineMs(text), 150 + (250 * text.length) / MIB);
}

const worst: { name: string; chars: number; ms: number; budget: number }[] = [];

/** Parses `text` with `parse` (its refusals are fine) and checks the CPU time against the budget. */
function withinBudget(name: string, text: string, parse: (text: string) => unknown): boolean {
  const budget = budgetMs(text);
  const ms = cpuMs(() => {
    try {
      parse(text);
    } catch (error) {
      if (!(error instanceof CaptionsParseError)) throw error;
    }
  });
  const seen = worst.find((entry) => entry.name === name);
  if (!seen) worst.push({ name, chars: text.length, ms, budget });
  else if (ms / budget > seen.ms / seen.budget) Object.assign(seen, { chars: text.length, ms, budget });
  if (ms > budget) throw new Error(`${name}: ${ms.toFixed(0)} ms of CPU for ${text.length} characters (budget ${budget.toFixed(0)} ms); input starts ${JSON.stringify(text.slice(0, 120))}`);
  return true;
}

/** `unit` repeated up to `chars` characters. */
function repeatTo(unit: string, chars: number): string {
  return unit.length === 0 ? "" : unit.repeat(Math.max(1, Math.floor(chars / unit.length)));
}

// Tokens each grammar reacts to: ASS blocks and drawing switches, tags and voices,
// entities, timing pieces, every kind of whitespace and line separator.
const MARKUP_TOKENS = [
  "{", "}", "{\\p1", "\\p1", "\\p0", "{\\an8}", "\\N", "\\h", "\\", "<", ">", "<v", "<v.", "<v ", "v ", "<i>", "</i>", "<c.x>",
  "&", "&#", "&#x", "amp;", "&lt;", "#1", "x", "a", " ", "\t", "\u00a0", "\u2028", "\u200b", "\u202e", "\ufeff", ".", ",", ":", "-", "0",
];
const TIMING_TOKENS = ["0", "00", "00:", ":", ",", ".", "000", "-", "-->", " ", "\t", "\u2028", "\u00a0", "9", "1:"];
const STRUCTURE_TOKENS = [...MARKUP_TOKENS, "\n", "\n\n", "\r\n", " \n", "1\n", "-->", "00:00:01,000 --> 00:00:02,000\n", "WEBVTT", "NOTE", "[Events]", "Format:", "Dialogue:"];

const unitOf = (tokens: string[], max = 8) => fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: max }).map((parts) => parts.join(""));

/** SubRip whose cues are each `unit` repeated to just under the 2,000-character cue limit. */
function srtOf(unit: string, totalChars: number): string {
  const text = repeatTo(unit.replace(/\n/g, " "), 1990).slice(0, 1990);
  const cues: string[] = [];
  let size = 0;
  for (let i = 1; size < totalChars; i += 1) {
    const s = i % 3600;
    const cue = `${i}\n${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}:00,000 --> ${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}:00,500\n${text}\n\n`;
    cues.push(cue);
    size += cue.length;
  }
  return cues.join("");
}

const params = { numRuns: RUNS, endOnFailure: true } as const;

describe("subtitles and captions (engine)", () => {
  test("SubRip cues full of markup: cleaned in linear time", () => {
    fc.assert(fc.property(unitOf(MARKUP_TOKENS), (unit) => withinBudget("srt cues", srtOf(unit, MIB), parseCaptions)), params);
  });

  test("WebVTT with long header and timing lines", () => {
    fc.assert(
      fc.property(unitOf(TIMING_TOKENS), unitOf(MARKUP_TOKENS), (timingTail, header) => {
        withinBudget("vtt header", `WEBVTT ${repeatTo(header.replace(/\n/g, " "), MIB)}\n\n00:01.000 --> 00:02.000\nhello\n`, parseCaptions);
        withinBudget("timing line", `1\n00:00:01,000 --> 00:00:02,000${repeatTo(timingTail, MIB / 2)}x\u2028\nhello\n`, parseCaptions);
        withinBudget("timing start", `1\n${repeatTo(timingTail, MIB / 2)}\nhello\n`, parseCaptions);
        return true;
      }),
      params,
    );
  });

  test("whole files of structure tokens (blocks, separators, signatures)", () => {
    fc.assert(
      fc.property(unitOf(STRUCTURE_TOKENS, 12), fc.boolean(), (unit, vtt) =>
        withinBudget("structure", (vtt ? "WEBVTT\n\n" : "") + repeatTo(unit, MIB), parseCaptions),
      ),
      params,
    );
  });

  test("ASS events full of override blocks and drawings", () => {
    fc.assert(
      fc.property(unitOf(MARKUP_TOKENS), (unit) => {
        const text = repeatTo(unit.replace(/\n/g, " "), 1990).slice(0, 1990);
        const header = "[Script Info]\nTitle: x\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n";
        const line = `Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,${text}\n`;
        return withinBudget("ass events", header + repeatTo(line, MIB), parseAss);
      }),
      params,
    );
  });

  test("one cue's text, any length: the cleaner alone", () => {
    fc.assert(fc.property(unitOf(MARKUP_TOKENS, 12), (unit) => withinBudget("cue text", repeatTo(unit, MIB / 4), plainCueText)), params);
  });

  test("bytes: UTF-8 and UTF-16 decoding with the BOM rules", () => {
    fc.assert(
      fc.property(unitOf(MARKUP_TOKENS), fc.constantFrom("utf8", "utf16le"), (unit, encoding) => {
        const bytes = Buffer.from(repeatTo(unit, MIB), encoding);
        const framed = encoding === "utf16le" ? Buffer.concat([Buffer.from([0xff, 0xfe]), bytes]) : bytes;
        return withinBudget("decode", framed.toString("latin1"), () => decodeCaptionBytes(new Uint8Array(framed)));
      }),
      params,
    );
  });

  test("the finding: 200 SubRip cues of {\\p1 repeated 500 times", () => {
    const file = srtOf("{\\p1", 200 * 2040).split("\n\n").slice(0, 200).join("\n\n");
    expect(file.split("-->").length - 1).toBe(200);
    expect(withinBudget("finding", file, parseCaptions)).toBe(true);
  });
});

describe("Worker parsers", () => {
  test("caption sidecar shape check (WebVTT and SubRip)", () => {
    fc.assert(
      fc.property(unitOf(STRUCTURE_TOKENS, 12), fc.constantFrom("vtt" as const, "srt" as const), fc.constantFrom("", "WEBVTT", "1", "1 "), (unit, format, prefix) =>
        withinBudget("caption shape", prefix + repeatTo(unit, MIB), (text) => looksLikeCaptions(format, text)),
      ),
      params,
    );
  });

  test("tus Upload-Metadata and the file name", () => {
    const tokens = [",", " ", "  ", "filename", "name", "a", "=", "==", "/", "+", "YQ==", "8J+YgA==", "\t", "key", "!", "~"];
    fc.assert(
      fc.property(unitOf(tokens, 10), (unit) => {
        // The header is capped at 4,096 characters; past the cap it must be refused as fast.
        for (const size of [4096, MIB]) {
          withinBudget("tus metadata", repeatTo(unit, size), (header) => {
            const parsed = parseMetadataHeader(header);
            if (parsed.ok) fileNameFromMetadata(parsed.values);
          });
        }
        return true;
      }),
      params,
    );
    // A decoded name of any length (the header cap allows about 3 KB of it).
    fc.assert(
      fc.property(unitOf(["😀", "a", "/", "\\", "\u0000", " ", "\ud800", "\udc00", "é"], 6), (unit) =>
        withinBudget("file name", repeatTo(unit, MIB), (name) => fileNameFromMetadata(new Map([["filename", name]]))),
      ),
      params,
    );
  });

  test("JSON bodies with the contract's schemas", () => {
    const scalar = fc.constantFrom('"a"', "1", "-1e308", "true", "null", '"\\u0000"', '"\\ud800"', '"\\\\"', '"<v a>"', "0.000001");
    fc.assert(
      fc.property(scalar, fc.constantFrom("array", "object", "nested", "string"), (value, shape) => {
        const n = MIB / 16;
        const body =
          shape === "array"
            ? `{"clips":[${Array.from({ length: n / 4 }, () => value).join(",")}]}`
            : shape === "object"
              ? `{${Array.from({ length: n / 4 }, (_, i) => `"k${i}":${value}`).join(",")}}`
              : shape === "nested"
                ? `${"[".repeat(5000)}${value}${"]".repeat(5000)}`
                : JSON.stringify({ aspect_ratio: "9:16".repeat(n / 4), title: value.repeat(n / 8) });
        return withinBudget(`json ${shape}`, body, (text) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            return;
          }
          ClipConfig.safeParse(parsed);
          CompleteReport.safeParse(parsed);
          ProbeReport.safeParse(parsed);
        });
      }),
      params,
    );
  });

  test("form e-mail addresses (dashboard sign-in and sign-up, up to the 16 KiB form limit)", () => {
    const email = z.email().max(254);
    fc.assert(
      fc.property(unitOf(["a", ".", "@", "-", "a.", "..", "_", "+", "1", "@a", ".a"], 6), (unit) =>
        withinBudget("e-mail", repeatTo(unit, 16 * 1024), (text) => email.safeParse(text)),
      ),
      params,
    );
  });
});

test("summary", () => {
  console.log(
    "linear-time parsers, worst share of the budget per parser:\n" +
      worst.map((w) => `  ${w.name.padEnd(16)} ${String(w.chars).padStart(8)} chars  ${w.ms.toFixed(1).padStart(7)} ms of ${w.budget.toFixed(0)} ms`).join("\n"),
  );
  expect(worst.length).toBeGreaterThan(10);
});
