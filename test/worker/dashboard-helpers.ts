/**
 * A minimal browser stand-in for the dashboard suites: a cookie jar, same-origin
 * form posts (with the Origin header a browser sends), and the CSRF token read
 * from the page the form came from.
 */
import { SELF } from "cloudflare:test";

export const ORIGIN = "http://worker.test";
export const PASSWORD = "correct horse battery staple";

export class Visitor {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin = ORIGIN, readonly address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`) {}

  private remember(res: Response): void {
    for (const header of res.headers.getSetCookie()) {
      const [pair = "", ...attributes] = header.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await SELF.fetch(`${this.origin}${path}`, {
      headers: { Cookie: this.cookieHeader(), "CF-Connecting-IP": this.address, ...headers },
      redirect: "manual",
    });
    this.remember(res);
    return res;
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    const res = await SELF.fetch(`${this.origin}${path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Cookie: this.cookieHeader(),
        Origin: this.origin,
        "CF-Connecting-IP": this.address,
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
    this.remember(res);
    return res;
  }

  /** Loads `pagePath` and posts its form to `action` with the page's CSRF token. */
  async submit(pagePath: string, action: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    const page = await this.get(pagePath);
    const token = csrfTokenIn(await page.text());
    return this.post(action, { csrf_token: token, ...fields }, headers);
  }

  /** Posts the sign-up form only: its answer is the same redirect whether or not the address was taken. */
  async signUpOnly(email = uniqueEmail(), password = PASSWORD): Promise<Response> {
    return this.submit("/dashboard/signup", "/dashboard/signup", { email, password });
  }

  /**
   * Signs up and then signs in where the sign-up leads, as a person does.
   * `res` is the sign-in's answer (the one that starts the session), or the
   * sign-up's when it did not lead to the sign-in page (refused, throttled).
   */
  async signUp(email = uniqueEmail(), password = PASSWORD): Promise<{ email: string; res: Response; signUpRes: Response }> {
    const signUpRes = await this.signUpOnly(email, password);
    const location = signUpRes.headers.get("Location");
    if (signUpRes.status !== 303 || location === null) return { email, res: signUpRes, signUpRes };
    const next = new URL(location, this.origin).searchParams.get("next") ?? "";
    const res = await this.submit(location, "/dashboard/login", { email, password, next });
    return { email, res, signUpRes };
  }

  async logIn(email: string, password = PASSWORD): Promise<Response> {
    return this.submit("/dashboard/login", "/dashboard/login", { email, password });
  }
}

export function csrfTokenIn(html: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error("no CSRF token in the page");
  return match[1];
}

let counter = 0;
export function uniqueEmail(): string {
  counter += 1;
  return `dash-${Date.now()}-${counter}-${crypto.randomUUID().slice(0, 6)}@example.com`;
}

/** The alert text of a page (its role="alert" block), without tags. */
export function alertText(html: string): string {
  const match = /<div class="alert" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return (match?.[1] ?? "")
    .replace(/<[^>]+>/g, "")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&")
    .trim();
}
