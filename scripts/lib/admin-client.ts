/**
 * The one client of the operator API (/admin/v1): the admin command line
 * (scripts/admin.ts), the demo, the end-to-end tests and the benches.
 */
import { fetchThroughDevProxy } from "./dev-proxy-retry.ts";

export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeProblem(status, body));
    this.name = "AdminApiError";
  }
}

function describeProblem(status: number, body: unknown): string {
  if (body && typeof body === "object" && "detail" in body) {
    const problem = body as { code?: string; detail?: string; errors?: { path: string; message: string }[] };
    const fields = problem.errors?.map((e) => `\n  ${e.path}: ${e.message}`).join("") ?? "";
    return `${status} ${problem.code ?? ""}: ${problem.detail ?? ""}${fields}`;
  }
  return `HTTP ${status}`;
}

/** The answer's JSON; a body that is not JSON (a proxy's page, say) becomes an error naming the status and the start of the text. */
function parseAnswer(res: Response, text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AdminApiError(res.status, { detail: `the answer is not JSON (${res.headers.get("content-type") ?? "no content type"}): ${text.slice(0, 200)}` });
  }
}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { response: res, text } = await fetchThroughDevProxy(`${this.baseUrl.replace(/\/+$/, "")}/admin/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.token}`,
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const parsed = parseAnswer(res, text);
    if (!res.ok) throw new AdminApiError(res.status, parsed);
    return parsed as T;
  }

  createAccount(email: string, plan: string) {
    return this.request<{ account_id: string; email: string; plan: string; key_id: string; api_key: string }>("POST", "/accounts", { email, plan });
  }
}
