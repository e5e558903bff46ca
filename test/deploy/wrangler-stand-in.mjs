#!/usr/bin/env node
// A recording stand-in for `wrangler`: appends each call (argv, and whether
// stdin carried a value) to $WRANGLER_STAND_IN_DIR/calls.jsonl, keeps the
// account's resources in state.json, and prints what wrangler prints for the
// list commands (d1 list --json: an array of {uuid, name, ...}; r2 bucket
// list: "name:" and "creation_date:" lines; queues list: a table; secret
// list --format json: an array of {name, type}).
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.WRANGLER_STAND_IN_DIR;
const statePath = join(dir, "state.json");
const state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, "utf8")) : { d1: [], buckets: [], queues: [], secrets: {} };
const args = process.argv.slice(2).filter((a, i, all) => a !== "--config" && all[i - 1] !== "--config");
const stdin = args[0] === "secret" && args[1] === "put" ? readFileSync(0, "utf8") : "";
appendFileSync(join(dir, "calls.jsonl"), `${JSON.stringify({ args, stdin: stdin.length > 0 })}\n`);
const save = () => writeFileSync(statePath, JSON.stringify(state));
const [a, b, c, d] = args;
if (a === "d1" && b === "list") console.log(JSON.stringify(state.d1.map((db) => ({ uuid: db.uuid, name: db.name, created_at: "2026-01-01T00:00:00.000Z", version: "production", num_tables: 0, file_size: 0 }))));
else if (a === "d1" && b === "create") {
  const uuid = "4f1c2a9e-1111-4222-8333-123456789abc";
  state.d1.push({ uuid, name: c });
  save();
  console.log(`✅ Successfully created DB '${c}'\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "${c}"\ndatabase_id = "${uuid}"`);
} else if (a === "r2" && b === "bucket" && c === "list") console.log(`Listing buckets...\n${state.buckets.map((n) => `name:           ${n}\ncreation_date:  2026-01-01T00:00:00.000Z`).join("\n\n")}`);
else if (a === "r2" && b === "bucket" && c === "create") { state.buckets.push(d); save(); console.log(`Creating bucket '${d}'...\n✅ Created bucket '${d}'`); }
else if (a === "queues" && b === "list") console.log(`┌──────┬──────┐\n│ id │ name │ created_on │\n${state.queues.map((n) => `│ 0123abcd │ ${n} │ 2026-01-01 │`).join("\n")}\n└──────┘`);
else if (a === "queues" && b === "create") { state.queues.push(c); save(); console.log(`Creating queue '${c}'\nCreated queue '${c}'`); }
else if (a === "secret" && b === "list") console.log(JSON.stringify(Object.keys(state.secrets).map((name) => ({ name, type: "secret_text" }))));
else if (a === "secret" && b === "put") { state.secrets[c] = stdin; save(); console.log(`✨ Success! Uploaded secret ${c}`); }
else if (a === "d1" && b === "migrations") console.log("Migrations applied");
else { console.error(`stand-in: unknown command ${args.join(" ")}`); process.exit(2); }
