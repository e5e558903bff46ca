/** Where the project and the tools the local stack and the benches run are. */
import { join, resolve } from "node:path";

export const PROJECT_ROOT = resolve(import.meta.dirname, "../..");
export const TSX_BIN = join(PROJECT_ROOT, "node_modules", ".bin", "tsx");
