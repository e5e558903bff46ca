/**
 * Sign up, log in, log out. Every failure of a sign-in says the same thing,
 * whether the address is unknown, has no password or the password is wrong,
 * and an unknown address costs the same KDF work as a known one. A sign-up
 * answers the same whether or not the address has an account (the same
 * redirect to the sign-in page, no session either way), so it reveals nothing.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { createAccount } from "../../db/accounts.ts";
import { findLoginByEmail, setPasswordHash } from "../../db/passwords.ts";
import { Alert, CsrfField, Field, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import type { DashboardEnv } from "../env.ts";
import { visitorCsrf, visitorCsrfToken } from "../security/csrf.ts";
import {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyAgainstDecoy,
  verifyPassword,
} from "../security/password.ts";
import { endSession, requireSession, safeNextPath, startSession } from "../security/session.ts";
import { sessionCsrf } from "../security/csrf.ts";
import { admitSignIn, admitSignUp, clientAddress, signInSucceeded, waitDelay } from "../security/throttle.ts";

/** New dashboard accounts start here (SPEC section 3). */
export const SIGN_UP_PLAN = "free";

export const SIGN_IN_FAILED = "That e-mail address and password do not match an account.";
/** Shown after every sign-up, whether an account was created or the address already had one. */
export const SIGN_UP_DONE =
  "If that e-mail address had no account, it has one now: log in with the password you chose. If it already had one, log in with that account's password.";
/** Where every accepted sign-up form leads (the same answer for a new and a taken address). */
export const SIGN_UP_REDIRECT = "/dashboard/login?signed_up=1&next=%2Fdashboard%2Fjobs";

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
  notice?: string;
}

function AuthForm({ mode, csrf, email = "", next, errors = [], notice }: AuthFormProps) {
  const signup = mode === "signup";
  return (
    <div class="card narrow">
      {notice ? <Notice>{notice}</Notice> : null}
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
    const notice = c.req.query("signed_up") === "1" ? SIGN_UP_DONE : undefined;
    return renderAuthPage(c, { mode: "login", next: c.req.query("next"), notice });
  })
  .post("/login", async (c) => {
    const { email, password, next } = await formFields(c);
    const parsed = Credentials.safeParse({ email, password });
    if (!parsed.success) return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    const address = clientAddress(c.req.raw);
    const verdict = await admitSignIn(c.env.DB, email, address);
    if (!verdict.allowed) {
      c.header("Retry-After", String(verdict.retryAfterSeconds));
      return renderAuthPage(c, { mode: "login", email, next, errors: [throttled(verdict.retryAfterSeconds)] }, 429);
    }
    // Many recent failures on this e-mail (from anywhere): slowed, never refused.
    await waitDelay(verdict.delayMs);
    const login = await findLoginByEmail(c.env.DB, email);
    if (!login?.passwordHash) {
      await verifyAgainstDecoy(password);
      return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    }
    const check = await verifyPassword(password, login.passwordHash);
    if (!check.ok) return renderAuthPage(c, { mode: "login", email, next, errors: [SIGN_IN_FAILED] }, 401);
    if (check.needsRehash) await setPasswordHash(c.env.DB, login.accountId, await hashPassword(password));
    await signInSucceeded(c.env.DB, email, address);
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
    const verdict = await admitSignUp(c.env.DB, clientAddress(c.req.raw));
    if (!verdict.allowed) {
      c.header("Retry-After", String(verdict.retryAfterSeconds));
      return renderAuthPage(c, { mode: "signup", email, errors: [throttled(verdict.retryAfterSeconds)] }, 429);
    }
    // Hash first: a taken address then costs the same time as a free one.
    const passwordHash = await hashPassword(password);
    try {
      await createAccount(c.env.DB, { email, plan: SIGN_UP_PLAN, passwordHash });
    } catch (err) {
      // The UNIQUE e-mail constraint (also under a concurrent sign-up of the same address):
      // nothing is created, and the answer is the one a new address gets.
      if (!String(err).includes("UNIQUE")) throw err;
    }
    return c.redirect(SIGN_UP_REDIRECT, 303);
  })
  .post("/logout", requireSession, sessionCsrf, async (c) => {
    await endSession(c);
    return c.redirect("/dashboard/login", 303);
  });
