/**
 * The dashboard's page: who is signed in, the layout, and which page a path
 * shows. The server serves this page for each of these paths, and sends a
 * visitor without a session to /sign-in first.
 */
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, rememberSession, type Session } from './api.ts';
import { interceptLinks, navigate, useLocation } from './router.ts';
import { AccountPage } from './pages/account.tsx';
import { AlertsPage } from './pages/alerts.tsx';
import { IssuePage } from './pages/issue.tsx';
import { IssueEventsPage } from './pages/issue-events.tsx';
import { IssuesPage } from './pages/issues.tsx';
import { MonitorPage, MonitorsPage, ProbePage } from './pages/monitors.tsx';
import { OrganisationPage } from './pages/organisation.tsx';
import { PerformanceGroupPage, PerformancePage, VitalsPage } from './pages/performance.tsx';
import { LogsPage, TracePage } from './pages/traces.tsx';
import { ProjectSettingsPage, ProjectsPage } from './pages/projects.tsx';
import { ReleasePage, ReleasesPage } from './pages/releases.tsx';
import { SetPasswordPage, SignInPage } from './pages/sign-in.tsx';
import { Title } from './ui.tsx';

const OPEN_PATHS = ['/sign-in', '/set-password'];

function Page({ url, session }: { url: URL; session: Session }) {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const q = url.searchParams;
  let m: RegExpMatchArray | null;
  // an organisation that requires two-factor sign-in holds its users on the Account page until it is on
  if (path === '/account' || session.setup_2fa) return <AccountPage session={session} />;
  if (path === '/' || path === '/projects') return <ProjectsPage session={session} />;
  if (path === '/organisation') return <OrganisationPage session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)$/))) return <ProjectSettingsPage id={m[1]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/releases$/))) return <ReleasesPage id={m[1]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/releases\/([^/]+)$/))) return <ReleasePage id={m[1]!} release={decodeURIComponent(m[2]!)} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/issues$/))) return <IssuesPage id={m[1]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/issues\/(\d+)$/))) return <IssuePage id={m[1]!} issue={m[2]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/issues\/(\d+)\/events$/))) return <IssueEventsPage id={m[1]!} issue={m[2]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/issues\/(\d+)\/events\/([0-9a-f]{32})$/))) return <IssuePage id={m[1]!} issue={m[2]!} event={m[3]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/alerts$/))) return <AlertsPage id={m[1]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/performance$/))) return <PerformancePage id={m[1]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/performance\/([A-Za-z0-9_-]{12})$/))) return <PerformanceGroupPage id={m[1]!} group={m[2]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/vitals$/))) return <VitalsPage id={m[1]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/traces\/([0-9a-f]{32})$/))) return <TracePage id={m[1]!} trace={m[2]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/logs$/))) return <LogsPage id={m[1]!} query={q} />;
  if ((m = path.match(/^\/projects\/(\d+)\/probes\/(\d+)$/))) return <ProbePage id={m[1]!} probe={m[2]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/monitors$/))) return <MonitorsPage id={m[1]!} session={session} />;
  if ((m = path.match(/^\/projects\/(\d+)\/monitors\/([^/]+)$/))) return <MonitorPage id={m[1]!} slug={decodeURIComponent(m[2]!)} session={session} />;
  return (
    <section>
      <Title>Not found</Title>
      <p>
        No page here. <a href="/projects">Projects</a>
      </p>
    </section>
  );
}

function App() {
  const url = useLocation();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const open = OPEN_PATHS.includes(url.pathname);
  useEffect(() => {
    if (open || session) return;
    api<Session>('GET', '/session').then(
      (s) => {
        rememberSession(s);
        setSession(s);
      },
      () => navigate(`/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`, { replace: true }),
    );
  }, [open, session]);

  const signOut = async () => {
    await api('DELETE', '/session');
    setSession(null);
    navigate('/sign-in', { replace: true });
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a href="/projects" class="brand">
          Lookout
        </a>
        {session && (
          <nav aria-label="Main">
            <a href="/projects" aria-current={url.pathname.startsWith('/projects') || url.pathname === '/' ? 'page' : undefined}>
              Projects
            </a>
            <a href="/organisation" aria-current={url.pathname === '/organisation' ? 'page' : undefined}>
              Organisation
            </a>
            <a href="/account" aria-current={url.pathname === '/account' ? 'page' : undefined}>
              Account
            </a>
            <a href="/admin/queues" data-external>
              Queues
            </a>
            <a href="/metrics" data-external>
              Metrics
            </a>
          </nav>
        )}
        {session && (
          <div class="who">
            <span>
              {session.email} ({session.role})
            </span>{' '}
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">
        {url.pathname === '/sign-in' ? (
          <SignInPage onSignedIn={setSession} />
        ) : url.pathname === '/set-password' ? (
          <SetPasswordPage />
        ) : session ? (
          <Page url={url} session={session} />
        ) : (
          <p class="muted" aria-live="polite">
            Loading…
          </p>
        )}
      </main>
    </>
  );
}

interceptLinks();
render(<App />, document.getElementById('app')!);
