/** The fleet's capacity (a Worker var) must be what the Container binding allows (wrangler.toml). */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const wranglerToml = readFileSync(path.resolve(import.meta.dirname, "../../wrangler.toml"), "utf8");

/** The lines of one [[section]] or [section] block (up to the next header). */
function blocks(header: string): string[] {
  const parts = wranglerToml.split(/^(?=\[)/m);
  return parts.filter((part) => part.startsWith(header + "\n") || part.startsWith(header + "\r\n"));
}

function value(block: string, key: string): string | undefined {
  return new RegExp(`^${key}\\s*=\\s*"?([^"\\n]*)"?\\s*$`, "m").exec(block)?.[1];
}

describe("wrangler.toml", () => {
  it("sets ENGINE_MAX_INSTANCES to the container's max_instances", () => {
    const vars = blocks("[vars]");
    const containers = blocks("[[containers]]");
    expect(vars).toHaveLength(1);
    expect(containers).toHaveLength(1);
    const capacity = Number(value(vars[0]!, "ENGINE_MAX_INSTANCES"));
    const maxInstances = Number(value(containers[0]!, "max_instances"));
    expect(Number.isInteger(capacity) && capacity > 0).toBe(true);
    expect(capacity).toBe(maxInstances);
  });

  it("consumes the jobs dead-letter queue and keeps private sources off", () => {
    const consumers = blocks("[[queues.consumers]]").map((b) => value(b, "queue"));
    expect(consumers).toContain("clipjobs-jobs");
    expect(consumers).toContain("clipjobs-jobs-dlq");
    expect(value(blocks("[vars]")[0]!, "ALLOW_PRIVATE_SOURCES")).toBe("false");
  });

  it("sends webhook deliveries the consumer keeps failing on to a dead-letter queue that the Worker consumes", () => {
    const consumers = blocks("[[queues.consumers]]");
    const webhooks = consumers.find((b) => value(b, "queue") === "clipjobs-webhooks");
    expect(webhooks && value(webhooks, "dead_letter_queue")).toBe("clipjobs-webhooks-dlq");
    expect(consumers.map((b) => value(b, "queue"))).toContain("clipjobs-webhooks-dlq");
  });
});
