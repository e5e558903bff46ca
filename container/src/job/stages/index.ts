/**
 * A job, in order (pipeline.ts runs them; context.ts is what they share):
 * download the source (analysing it as it arrives when it can), fetch the
 * captions_url, probe it and let the Worker reserve credits, finish the
 * analysis, transcribe, pick the candidates, judge them, prepare the brand,
 * render the clips while uploading them, complete.
 */
import type { JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";
import { analyse } from "./analyse.ts";
import { brand } from "./brand.ts";
import { candidates } from "./candidates.ts";
import { captionsUrl } from "./captions-url.ts";
import { clips } from "./clips.ts";
import { complete } from "./complete.ts";
import { download } from "./download.ts";
import { judge } from "./judge.ts";
import { probe } from "./probe.ts";
import { speechModel } from "./speech-model.ts";
import { transcript } from "./transcript.ts";

export const JOB_STAGES: readonly JobStage<JobContext>[] = [download, captionsUrl, probe, speechModel, analyse, transcript, candidates, judge, brand, clips, complete];
