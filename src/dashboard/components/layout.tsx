import type { Child } from "hono/jsx";
import { DASHBOARD_CSS } from "../assets/style.ts";
import type { DashboardSession } from "../env.ts";
import { CsrfField } from "./form.tsx";

export type NavItem = "jobs" | "configs" | "keys" | "webhooks" | "usage";

const NAV: { id: NavItem; href: string; label: string }[] = [
  { id: "jobs", href: "/dashboard/jobs", label: "Jobs" },
  { id: "configs", href: "/dashboard/configs", label: "Configurations" },
  { id: "keys", href: "/dashboard/keys", label: "API keys" },
  { id: "webhooks", href: "/dashboard/webhooks", label: "Webhooks" },
  { id: "usage", href: "/dashboard/usage", label: "Usage" },
];

export interface LayoutProps {
  title: string;
  nonce: string;
  session: DashboardSession | null;
  current?: NavItem;
  /** Inline scripts this page needs (constants from assets/scripts). */
  scripts?: string[];
  children?: Child;
}

function Header({ session, current }: { session: DashboardSession; current?: NavItem }) {
  return (
    <header>
      <div class="bar">
        <a class="brand" href="/dashboard">clipjobs</a>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.map((item) => (
              <li>
                <a href={item.href} aria-current={item.id === current ? "page" : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{session.email}</span>
        <form method="post" action="/dashboard/logout">
          <CsrfField token={session.csrfToken} />
          <button type="submit">Log out</button>
        </form>
      </div>
    </header>
  );
}

/** Every page: skip link, header with navigation (when signed in), one <main> with the page's <h1>. */
export function Layout({ title, nonce, session, current, scripts = [], children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light" />
        <title>{`${title} · clipjobs`}</title>
        <style nonce={nonce} dangerouslySetInnerHTML={{ __html: DASHBOARD_CSS }} />
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        {session ? <Header session={session} current={current} /> : null}
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
        {scripts.map((script) => (
          <script nonce={nonce} dangerouslySetInnerHTML={{ __html: script }} />
        ))}
      </body>
    </html>
  );
}
