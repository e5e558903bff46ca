/** One strategy per video_type (SPEC section 3). */
import type { VideoType } from "#contract";
import { gaming } from "./gaming.ts";
import { general } from "./general.ts";
import { lecture } from "./lecture.ts";
import { podcast } from "./podcast.ts";
import { sports } from "./sports.ts";
import type { Strategy } from "./strategy.ts";
import { vlog } from "./vlog.ts";

export type { Strategy } from "./strategy.ts";

export const STRATEGIES: Record<VideoType, Strategy> = { podcast, lecture, gaming, sports, vlog, general };
