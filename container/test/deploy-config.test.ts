/** The fleet's capacity (Worker vars) must fit what the Container binding and the account allow (wrangler.toml). */
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
  it("keeps ENGINE_MAX_INSTANCES below the container's max_instances by a headroom, within the vCPU limit", () => {
    const vars = blocks("[vars]");
    const containers = blocks("[[containers]]");
    expect(vars).toHaveLength(1);
    expect(containers).toHaveLength(1);
    const capacity = Number(value(vars[0]!, "ENGINE_MAX_INSTANCES"));
    const maxInstances = Number(value(containers[0]!, "max_instances"));
    expect(Number.isInteger(capacity) && capacity > 0).toBe(true);
    // The platform counts instances the fleet only estimates (stopping ones): at least 1, and 5%.
    expect(maxInstances - capacity).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(maxInstances * 0.05)));
    // Cloudflare's account limit is 1,500 concurrent vCPU; the configured limit is at most that, and one
    // instance's vCPU is its instance type's (standard-4: 4).
    const vcpuLimit = Number(value(vars[0]!, "ENGINE_VCPU_LIMIT"));
    const instanceVcpu = Number(value(vars[0]!, "ENGINE_INSTANCE_VCPU"));
    expect(vcpuLimit).toBeLessThanOrEqual(1500);
    expect(value(containers[0]!, "instance_type")).toBe("standard-4");
    expect(instanceVcpu).toBe(4);
    expect(Math.min(capacity, Math.floor(vcpuLimit / instanceVcpu))).toBeGreaterThan(0);
  });

  it("bounds the jobs consumers' concurrency (every delivery calls the one FleetScheduler)", () => {
    const consumers = blocks("[[queues.consumers]]");
    const jobs = consumers.find((b) => value(b, "queue") === "clipjobs-jobs")!;
    const concurrency = Number(value(jobs, "max_concurrency"));
    expect(concurrency).toBeGreaterThan(0);
    expect(concurrency).toBeLessThanOrEqual(50);
    // Capacity failures never use the queue's retries (the fleet's start budget does); the queue's are for crashes.
    expect(Number(value(jobs, "max_retries"))).toBe(5);
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
