/**
 * The MCP server of one request: every tool, bound to the request's caller
 * and bindings. Built fresh per HTTP request (createMcpHandler's factory):
 * the server is stateless, as the 2026-07-28 revision of the protocol is,
 * and 2025-era clients are served the same tools statelessly.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { createUploadTool, getUsageTool, listConfigsTool, saveConfigTool } from "./account-tools.ts";
import { addClipTool, editClipTool } from "./clip-tools.ts";
import { exportJobTool } from "./export-tools.ts";
import { cancelJobTool, GET_JOB_MAX_WAIT_SECONDS, getJobTool, getTranscriptTool, listJobsTool, submitJobTool } from "./job-tools.ts";
import type { McpCall, ToolRegistration } from "./tool.ts";

export const MCP_SERVER_INFO = { name: "clipjobs", title: "clipjobs", version: "1.0.0" } as const;

const INSTRUCTIONS = [
  "clipjobs cuts long videos (podcasts, lectures, streams, vlogs) into short, captioned, well-framed clips.",
  `Typical use: submit_job with a video_url (or create_upload, send the file's bytes, then submit_job with upload_id); call get_job with wait_seconds ${GET_JOB_MAX_WAIT_SECONDS} (it answers as soon as the job ends) until the job is completed, failed or canceled;`,
  "then give the user the clips (title, url, what is said in them) and, if asked, get_transcript, or export_job for a video editor.",
  "Every tool call counts in the account's request window (e.g. 60 a minute on the free plan), each call of a JSON-RPC batch too: poll calmly. Errors carry a code (e.g. not_found, rate_limited, insufficient_credits) and a detail saying what to do.",
].join(" ");

export const TOOLS: readonly ToolRegistration[] = [
  submitJobTool,
  getJobTool,
  listJobsTool,
  cancelJobTool,
  getTranscriptTool,
  exportJobTool,
  editClipTool,
  addClipTool,
  getUsageTool,
  listConfigsTool,
  saveConfigTool,
  createUploadTool,
];

export function mcpServer(call: McpCall): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: INSTRUCTIONS, capabilities: { tools: {} } });
  for (const register of TOOLS) register(server, call);
  return server;
}
