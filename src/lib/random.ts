const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Base62 of the given bytes (big-endian number), so the text keeps all their entropy. */
export function base62(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let text = "";
  while (value > 0n) {
    text = BASE62[Number(value % 62n)] + text;
    value /= 62n;
  }
  // Fixed width: the length of a key never leaks the size of its number.
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  return text.padStart(width, "0");
}

export function randomBase62(byteCount: number): string {
  return base62(crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** Resource ids: a readable prefix and 96 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(12)}`;
}
