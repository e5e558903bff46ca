/**
 * XML escaping for the FCPXML and MLT writers. Text from users and sources
 * (titles, file names, URLs) may hold anything: markup characters are
 * escaped; characters XML 1.0 cannot carry at all (C0 controls other than
 * tab, newline and carriage return, U+FFFE/U+FFFF, lone surrogates) are
 * dropped; in attributes, tab and line breaks are written as character
 * references so a parser's attribute normalisation keeps them.
 */

// XML 1.0 Char production, complemented (surrogate pairs are matched as pairs first and kept).
const NOT_XML_CHAR = /([\uD800-\uDBFF][\uDC00-\uDFFF])|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/g;

export function xmlClean(text: string): string {
  return text.replace(NOT_XML_CHAR, (match, pair: string | undefined) => pair ?? "");
}

const TEXT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const ATTR_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, '"': "&quot;", "'": "&apos;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;" };

/** Character data. */
export function xmlText(text: string): string {
  return xmlClean(text).replace(/[&<>]/g, (ch) => TEXT_ESCAPES[ch]!);
}

/** An attribute value (written between double quotes). */
export function xmlAttr(text: string): string {
  return xmlClean(text).replace(/[&<>"'\t\n\r]/g, (ch) => ATTR_ESCAPES[ch]!);
}
