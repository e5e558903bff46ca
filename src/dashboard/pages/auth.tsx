/**
 * Sign up, log in, log out. Every failure of a sign-in says the same thing,
 * whether the address is unknown, has no password or the password is wrong,
 * and an unknown address costs the same KDF work as a known one.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { createAccount } from "../../db/accounts";
import { findLoginByEmail, setPasswordHash } from "../../db/passwords";
import { Alert, CsrfField, Field } from "../components/form";
import { Layout } from "../components/layout";
import type { DashboardEnv } from "../env";
import { visitorCsrf, visitorCsrfToken } from "../security/csrf";
import {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyAgainstDecoy,
  verifyPassword,
} from "../security/password";
import { endSession, requireSession, safeNextPath, startSession } from "../security/session";
import { sessionCsrf } from "../security/csrf";
import { admitAttempt, clientAddress, forgetAccountAttempts } from "../security/throttle";

/** New dashboard accounts start here (SPEC section 3). */
export const SIGN_UP_PLAN = "free";

export const SIGN_IN_FAILED = "That e-mail address and password do not match an account.";
export const SIGN_UP_FAILED =
  "An account could not be created with that e-mail address. If you already have one, log in instead.";

const Credentials = z.object({
  email: z.email().max(254),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});
const NewPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`)
  .max(MAX_PASSWORD_LENGTH, `The password can have at most ${MAX_PASSWORD_LENGTH} characters.`);

function throttled(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}

interface AuthFormProps {
  mode: "login" | "signup";
  csrf: string;
  email?: string;
  next?: string;
  errors?: string[];
}

function AuthForm({ mode, csrf, email = "", next, errors = [] }: AuthFormProps) {
  const signup = mode === "signup";
  return (
    <div class="card narrow">
      <Alert messages={errors} />
      <form method="post" action={signup ? "/dashboard/signup" : "/dashboard/login"}>
        <CsrfField token={csrf} />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <Field id="email" label="E-mail address">
          {(describedBy) => (
            <input id="email" name="email" type="email" value={email} autocomplete="email" required maxlength={254} aria-describedby={describedBy} autofocus />
          )}
        </Field>
        <Field id="password" label="Password" hint={signup ? `At least ${MIN_PASSWORD_LENGTH} characters.` : undefined}>
          {(describedBy) => (
            <input
              id="password"
              name="password"
              type="password"
              autocomplete={signup ? "new-password" : "current-password"}
              required
              minlength={signup ? MIN_PASSWORD_LENGTH : undefined}
              maxlength={MAX_PASSWORD_LENGTH}
              aria-describedby={describedBy}
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit">{signup ? "Create account" : "Log in"}</button>
        </div>
      </form>
      <p>
        {signup ? (
          <>Already have an account? <a href="/dashboard/login">Log in</a></>
        ) : (
          <>New here? <a href="/dashboard/signup">Create an account</a></>
        )}
      </p>
    </div>
  );
}

function renderAuthPage(c: Context<DashboardEnv>, props: Omit<AuthFormProps, "csrf">, status: 200 | 400 | 401 | 429 = 200) {
  const title = props.mode === "signup" ? "Create your account" : "Log in";
  return c.html(
    <Layout title={title} nonce={c.get("nonce")} session={null}>
      <AuthForm {...props} csrf={visitorCsrfToken(c)} />
    </Layout>,
    status,
  );
}

async function formFields(c: Context<DashboardEnv>): Promise<{ email: string; password: string; next: string }> {
  const body = await c.req.parseBody();
  const text = (name: string): string => (typeof body[name] === "string" ? (body[name] as string) : "");
  return { email: text("email").trim().toLowerCase(), password: text("password"), next: text("next") };
}

export const authPages = new Hono<DashboardEnv>()
  .use("/login", visitorCsrf)
  .use("/signup", visitorCsrf)
  .get("/login", (c) => {
    if (c.get("session")) return c.redirect(safeNextPath(c.req.query("next")), 303);
    return renderAuthPage(c, { mode: "login", next: c.req.query("next") });
  })
  .post("/login", async (c) => {
    const { email, password, next } = await formFields(c);
    const parsed = Credentials.safeParse({ email, password });
    if (!parsed.success) return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    const verdict = await admitAttempt(c.env.DB, email, clientAddress(c.req.raw));
    if (!verdict.allowed) {
      c.header("Retry-After", String(verdict.retryAfterSeconds));
      return renderAuthPage(c, { mode: "login", email, next, errors: [throttled(verdict.retryAfterSeconds)] }, 429);
    }
    const login = await findLoginByEmail(c.env.DB, email);
    if (!login?.passwordHash) {
      await verifyAgainstDecoy(password);
      return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    }
    const check = await verifyPassword(password, login.passwordHash);
    if (!check.ok) return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    if (check.needsRehash) await setPasswordHash(c.env.DB, login.accountId, await hashPassword(password));
    await forgetAccountAttempts(c.env.DB, email);
    await startSession(c, login.accountId);
    return c.redirect(safeNextPath(next), 303);
  })
  .get("/signup", (c) => {
    if (c.get("session")) return c.redirect("/dashboard", 303);
    return renderAuthPage(c, { mode: "signup" });
  })
  .post("/signup", async (c) => {
    const { email, password } = await formFields(c);
    const errors: string[] = [];
    if (!z.email().max(254).safeParse(email).success) errors.push("Enter a valid e-mail address.");
    const passwordCheck = NewPassword.safeParse(password);
    if (!passwordCheck.success) errors.push(...passwordCheck.error.issues.map((issue) => issue.message));
    if (errors.length > 0) return renderAuthPage(c, { mode: "signup", email, errors }, 400);
    const verdict = await admitAttempt(c.env.DB, email, clientAddress(c.req.raw));
    if (!verdict.allowed) {
      c.header("Retry-After", String(verdict.retryAfterSeconds));
      return renderAuthPage(c, { mode: "signup", email, errors: [throttled(verdict.retryAfterSeconds)] }, 429);
    }
    // Hash first: a taken address then costs the same time as a free one.
    const passwordHash = await hashPassword(password);
    let accountId: string;
    try {
      accountId = (await createAccount(c.env.DB, { email, plan: SIGN_UP_PLAN, passwordHash })).id;
    } catch (err) {
      // The UNIQUE e-mail constraint (also under a concurrent sign-up of the same address).
      if (!String(err).includes("UNIQUE")) throw err;
      return renderAuthPage(c, { mode: "signup", email, errors: [SIGN_UP_FAILED] }, 400);
    }
    await forgetAccountAttempts(c.env.DB, email);
    await startSession(c, accountId);
    return c.redirect("/dashboard/jobs", 303);
  })
  .post("/logout", requireSession, sessionCsrf, async (c) => {
    await endSession(c);
    return c.redirect("/dashboard/login", 303);
  });
