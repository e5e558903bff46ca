/**
 * The one client of the operator API (/admin/v1): the admin command line
 * (scripts/admin.ts), the demo, the end-to-end tests and the benches.
 */
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

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl.replace(/\/+$/, "")}/admin/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.token}`,
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : null;
    if (!res.ok) throw new AdminApiError(res.status, parsed);
    return parsed as T;
  }

  createAccount(email: string, plan: string) {
    return this.request<{ account_id: string; email: string; plan: string; key_id: string; api_key: string }>("POST", "/accounts", { email, plan });
  }
}
