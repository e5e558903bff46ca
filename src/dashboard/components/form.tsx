import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "../security/csrf.ts";

export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={token} />;
}

/** Field-level messages, keyed by field name (from zod issue paths). */
export type FieldErrors = Record<string, string>;

/** `code`: the problem code behind the messages, where there is one (as the API would answer it). */
export function Alert({ messages, code }: { messages: string[]; code?: string | undefined }) {
  if (messages.length === 0) return null;
  return (
    <div class="alert" role="alert" data-code={code}>
      {messages.length === 1 ? <p>{messages[0]}</p> : <ul>{messages.map((m) => <li>{m}</li>)}</ul>}
    </div>
  );
}

export function Notice({ children }: { children?: Child }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

interface FieldProps {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  children: (describedBy: string | undefined) => Child;
}

/** A label, an optional hint and error, wired to the control with for/aria-describedby. */
export function Field({ id, label, hint, error, children }: FieldProps) {
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ") || undefined;
  return (
    <div>
      <label for={id}>
        {label}
        {hint ? (
          <span class="hint" id={`${id}-hint`}>
            {hint}
          </span>
        ) : null}
      </label>
      {children(described)}
      {error ? (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

interface ConfirmFormProps {
  action: string;
  csrfToken: string;
  /** Label of the destructive button. */
  confirmLabel: string;
  cancelHref: string;
}

/** The second step of a destructive action: a CSRF-protected POST or a way back. */
export function ConfirmForm({ action, csrfToken, confirmLabel, cancelHref }: ConfirmFormProps) {
  return (
    <form method="post" action={action}>
      <CsrfField token={csrfToken} />
      <div class="actions">
        <button type="submit" class="danger">
          {confirmLabel}
        </button>
        <a class="button secondary" href={cancelHref}>
          Cancel
        </a>
      </div>
    </form>
  );
}
