/**
 * The one audio shape the /transcribe channel route takes (#contract):
 * RIFF/WAVE, PCM, 16-bit little-endian, mono, 16 kHz. Checked here so a
 * malformed chunk is refused with a clear 400 instead of being billed to
 * Workers AI and coming back as garbage.
 */
export const WAV_SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = WAV_SAMPLE_RATE * 2;

export interface WavInfo {
  /** Length of the PCM data, in seconds. */
  durationSeconds: number;
}

function ascii(view: DataView, offset: number, length: number): string {
  let text = "";
  for (let i = 0; i < length; i += 1) text += String.fromCharCode(view.getUint8(offset + i));
  return text;
}

/** The audio's duration, or a sentence saying why the bytes are not the expected WAV. */
export function inspectWav(bytes: Uint8Array): WavInfo | { problem: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || ascii(view, 0, 4) !== "RIFF" || ascii(view, 8, 4) !== "WAVE") {
    return { problem: "The body is not a RIFF/WAVE file." };
  }
  let offset = 12;
  let formatChecked = false;
  while (offset + 8 <= bytes.byteLength) {
    const id = ascii(view, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.byteLength) return { problem: "The WAV fmt chunk is truncated." };
      const format = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const rate = view.getUint32(body + 4, true);
      const bits = view.getUint16(body + 14, true);
      // 0xFFFE (extensible) is what some encoders write for plain PCM too.
      if ((format !== 1 && format !== 0xfffe) || bits !== 16 || channels !== 1 || rate !== WAV_SAMPLE_RATE) {
        return {
          problem: `Audio must be PCM s16le, mono, ${WAV_SAMPLE_RATE} Hz (got format ${format}, ${bits} bits, ${channels} channels, ${rate} Hz).`,
        };
      }
      formatChecked = true;
    } else if (id === "data") {
      if (!formatChecked) return { problem: "The WAV data chunk comes before its fmt chunk." };
      // A streaming encoder may leave the size unset (0 or 0xFFFFFFFF): the data runs to the end.
      const available = bytes.byteLength - body;
      const length = size === 0 || size > available ? available : size;
      if (length < 2) return { problem: "The WAV file holds no audio." };
      return { durationSeconds: length / BYTES_PER_SECOND };
    }
    offset = body + size + (size % 2);
  }
  return { problem: formatChecked ? "The WAV file has no data chunk." : "The WAV file has no fmt chunk." };
}
