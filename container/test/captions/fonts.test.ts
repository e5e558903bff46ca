/**
 * The fonts behind the documented caption fonts and caption languages (issue
 * 29), as fontconfig (which libass asks) sees them on this machine: the same
 * Debian packages the engine image installs (container/Dockerfile) and CI
 * installs (.ci/run).
 */
import { describe, expect, it } from "vitest";
import { CAPTION_FONTS, CAPTION_LANGUAGES } from "#contract";
import { fontForText } from "../../src/captions/script.ts";
import { runProcess } from "../../src/shared/spawn.ts";

async function fc(command: string, args: string[]): Promise<string> {
  const result = await runProcess({ command, args, timeoutMs: 30_000 });
  expect(result.exitCode, result.stderrTail).toBe(0);
  return result.stdout;
}

/** fontconfig's name for a language where it differs from ISO 639-1; Cebuano and Ilocano are written in Latin letters, as Tagalog. */
const FONTCONFIG_LANGUAGE: Record<string, string> = { ns: "nso", ceb: "fil", ilo: "fil" };

describe("caption fonts", () => {
  it("has every documented caption font installed, in bold as captions draw it", async () => {
    for (const family of CAPTION_FONTS) {
      const matched = await fc("fc-match", ["-f", "%{family[0]}|%{style[0]}", `${family}:bold`]);
      expect(matched, family).toBe(`${family}|Bold`);
    }
  });

  it("has a font for every caption language", async () => {
    const missing: string[] = [];
    for (const language of CAPTION_LANGUAGES) {
      const families = await fc("fc-list", [`:lang=${FONTCONFIG_LANGUAGE[language] ?? language}`, "family"]);
      if (families.trim() === "") missing.push(language);
    }
    expect(missing).toEqual([]);
  });

  it("draws each script with a caption font that has its letters", async () => {
    const cases: [string, string | null, string][] = [
      ["今天天气很好", "zh", "Noto Sans CJK SC"],
      ["今日はいい天気です", "ja", "Noto Sans CJK JP"],
      ["오늘 날씨가 좋아요", "ko", "Noto Sans CJK KR"],
      ["مرحبا بكم", "ar", "Noto Sans Arabic"],
      ["आज मौसम अच्छा है", "hi", "Noto Sans Devanagari"],
      ["שלום לכולם", "he", "Noto Sans Hebrew"],
      ["Привет всем", "ru", "DejaVu Sans"],
    ];
    for (const [text, language, family] of cases) {
      const chosen = fontForText("DejaVu Sans", text, language);
      expect(chosen, text).toBe(family);
      // fontconfig agrees the family has every character of the text.
      const coverage = await fc("fc-list", [`${chosen}:charset=${[...text.replace(/\s/g, "")].map((c) => c.codePointAt(0)!.toString(16)).join(" ")}`, "family"]);
      expect(coverage.trim(), `${chosen} covers ${text}`).not.toBe("");
    }
    // A serif choice stays serif where a serif script font exists.
    expect(fontForText("Noto Serif", "مرحبا بكم", "ar")).toBe("Noto Naskh Arabic");
    expect(fontForText("Noto Serif", "今天天气很好", "zh")).toBe("Noto Serif CJK SC");
    // A chosen font that has the letters is kept.
    expect(fontForText("Noto Sans CJK JP", "今天天气很好", "zh")).toBe("Noto Sans CJK JP");
  });
});
