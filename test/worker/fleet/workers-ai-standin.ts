/**
 * Workers AI as the fleet simulation's account sees it: the `AI` binding's
 * `run`, answering the judge (a text-generation model, in the documented
 * shape: test/stand-ins/text-generation.ts) and Whisper (`{text,
 * transcription_info}`), each after a few simulated seconds, and holding the
 * account to its rate limits per task type.
 *
 * The limits are the ones developers.cloudflare.com/workers-ai/platform/limits
 * documents as defaults per task type: Automatic Speech Recognition 720
 * requests a minute, Text Generation 300 (a few models have their own
 * figure; the default judge model is not among them). The page does not say
 * how a minute is counted; this counts any 60 simulated seconds (calls arrive
 * the moment they are sent: the simulation has no network latency). A call past
 * the limit throws as the binding does for a 429 (the errors page,
 * developers.cloudflare.com/workers-ai/platform/errors, lists only 3036 and
 * 3040 under 429 and no code for the rate limit, so the message names the
 * status).
 */
import { taskOf, type AiTask } from "../../../src/ai/budget.ts";
import { answerJudgement, type TextGenerationInput } from "../../stand-ins/text-generation.ts";
import type { SimClock } from "./sim-clock.ts";

/** Workers AI's documented defaults, requests a minute per account. */
export const WORKERS_AI_LIMITS = { text_generation: 300, speech: 720 } as const;

export interface WorkersAiLimits {
  textPerMinute: number;
  speechPerMinute: number;
}

export interface WorkersAiTally {
  /** Calls that reached the account, by task. */
  calls: Partial<Record<AiTask, number>>;
  /** Calls Workers AI refused for the account's rate limit (429), by task. */
  refused: Partial<Record<AiTask, number>>;
  /** The most calls any 60 s held, by task. */
  busiestMinute: Partial<Record<AiTask, number>>;
}

/** What Whisper "hears" in every chunk: a question and its answer, so a candidate has a hook and a payoff. */
const HEARD = "Why does the fleet share one budget? Because Workers AI counts the whole account. That is the answer!";

export class SimWorkersAi {
  readonly tally: WorkersAiTally = { calls: {}, refused: {}, busiestMinute: {} };
  private readonly recent = new Map<AiTask, number[]>();

  constructor(
    private readonly clock: SimClock,
    private readonly limits: WorkersAiLimits,
    private readonly random: () => number,
  ) {}

  private limitOf(task: AiTask): number {
    if (task === "text_generation") return this.limits.textPerMinute;
    if (task === "speech") return this.limits.speechPerMinute;
    return Infinity;
  }

  /** Counts the call in its task's minute; false when the account's limit refuses it. */
  private admit(task: AiTask): boolean {
    // In the milliseconds the Worker's budget counts in (the clock's epochMs), so the two agree on a minute's edge.
    const now = this.clock.epochMs();
    const times = (this.recent.get(task) ?? []).filter((t) => t > now - 60_000);
    this.recent.set(task, times);
    if (times.length >= this.limitOf(task)) {
      this.tally.refused[task] = (this.tally.refused[task] ?? 0) + 1;
      return false;
    }
    times.push(now);
    this.tally.calls[task] = (this.tally.calls[task] ?? 0) + 1;
    this.tally.busiestMinute[task] = Math.max(this.tally.busiestMinute[task] ?? 0, times.length);
    return true;
  }

  async run(model: string, input: object): Promise<unknown> {
    const task = taskOf(model);
    if (!this.admit(task)) throw new Error(`429 Too Many Requests: the account is over ${this.limitOf(task)} ${task} requests a minute`);
    if (task === "speech") {
      await this.clock.sleep(1 + this.random());
      return { text: HEARD, transcription_info: { language: "en" } };
    }
    await this.clock.sleep(2 + 4 * this.random());
    return answerJudgement(model, input as TextGenerationInput);
  }

  binding(): Ai {
    return { run: (model: string, input: object) => this.run(model, input) } as unknown as Ai;
  }
}
