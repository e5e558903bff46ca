/** What ffprobe says about a downloaded clip or thumbnail. */
import { execFile } from "node:child_process";

export interface ProbedMedia {
  formatName: string;
  durationSeconds: number;
  video: { codec: string; width: number; height: number } | null;
  audio: { codec: string } | null;
}

interface FfprobeJson {
  format?: { format_name?: string; duration?: string };
  streams?: { codec_type?: string; codec_name?: string; width?: number; height?: number }[];
}

export function ffprobe(path: string): Promise<ProbedMedia> {
  const args = ["-v", "error", "-show_entries", "format=format_name,duration:stream=codec_type,codec_name,width,height", "-of", "json", path];
  return new Promise((resolve, reject) => {
    execFile(process.env.FFPROBE_PATH ?? "ffprobe", args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`ffprobe ${path}: ${stderr || error.message}`));
      const parsed = JSON.parse(stdout) as FfprobeJson;
      const streams = parsed.streams ?? [];
      const video = streams.find((s) => s.codec_type === "video");
      const audio = streams.find((s) => s.codec_type === "audio");
      resolve({
        formatName: parsed.format?.format_name ?? "",
        durationSeconds: Number(parsed.format?.duration ?? "NaN"),
        video: video ? { codec: video.codec_name ?? "", width: video.width ?? 0, height: video.height ?? 0 } : null,
        audio: audio ? { codec: audio.codec_name ?? "" } : null,
      });
    });
  });
}
