import type { VideoType } from "#contract";

/** SPEC section 3: what each analysis approach looks for. */
export const VIDEO_TYPE_DESCRIPTIONS: Record<VideoType, string> = {
  podcast:
    "Speech-driven: clips start and end in pauses between sentences, never mid-phrase; scored on speech density and vocal emphasis; scene cuts mostly ignored. Interviews too. Needs speech.",
  lecture:
    "Slides and screens: clips aligned to scene changes (slide changes) with continuous speech; tutorials, webinars, talks. Needs speech.",
  gaming: "Excitement: loudness peaks and bursts of motion and cuts; the peak sits in the second half of the clip.",
  sports: "Like gaming, weighted to crowd/commentary loudness peaks and replays.",
  vlog: "Balanced mix of speech continuity, motion and scene changes; without speech, motion, scene changes and loudness.",
  general: "The default blend when the content is unknown; without speech, it clips on what can be seen and heard.",
};
