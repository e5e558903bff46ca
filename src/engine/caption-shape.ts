/**
 * The light shape check of a caption sidecar the engine uploads: the engine
 * writes these files, so this only catches a wrong body sent to the wrong
 * route. Pure and imports nothing (test/parsers/linear-time.test.ts measures
 * it): anchored regexes whose quantifiers never compete for the same
 * characters, so the time is linear in the text.
 */
export function looksLikeCaptions(format: "vtt" | "srt", text: string): boolean {
  if (format === "vtt") return /^WEBVTT(?:[ \t][^\r\n]*)?(?:\r?\n|$)/.test(text);
  // An index line, then a timing line. `[ \t]*` before the line break, not `\s*`: two
  // whitespace runs that can both take a newline backtrack quadratically on a run of them.
  return text.trim() === "" || /^\s*\d+[ \t]*\r?\n[ \t]*\d{2}:\d{2}:\d{2},\d{3}[ \t]*-->/.test(text);
}
