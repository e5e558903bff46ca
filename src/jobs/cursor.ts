/** Opaque list cursor: base64url of "<created_at>|<job id>" of the last item of a page. */
import { decodeBase64Url, encodeBase64Url } from "hono/utils/encode";
import { isJobId } from "./ids.ts";

export interface CursorPosition {
  createdAt: string;
  id: string;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

export function encodeCursor(position: CursorPosition): string {
  return encodeBase64Url(new TextEncoder().encode(`${position.createdAt}|${position.id}`).buffer).replace(/=+$/, "");
}

/** The position, or null for anything this service did not issue. */
export function decodeCursor(cursor: string): CursorPosition | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(cursor));
  } catch {
    return null;
  }
  const [createdAt, id, ...rest] = text.split("|");
  if (rest.length > 0 || !createdAt || !id || !ISO_TIMESTAMP.test(createdAt) || !isJobId(id)) return null;
  return { createdAt, id };
}
