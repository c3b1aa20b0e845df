/**
 * Sentry's web API for tools (issue 70), driven by the real tools: `sentry-cli` 3.8 (info, organizations, projects,
 * releases, deploys, issues, events) and Sentry's MCP server 0.39 through a real MCP client over stdio
 * (@modelcontextprotocol/sdk). Each change a tool makes is read back through Lookout's own API.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { boundProject, call, drained, type TestContext } from './helpers/context.ts';
import { ensureNpm, runToExit, sentryCliBinary } from './helpers/real-clients.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions', 'maintenance'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

const ALL_SCOPES = ['org:read', 'project:read', 'project:write', 'project:releases'];
let cli = '';
let mcpDir = '';

beforeAll(() => {
  cli = sentryCliBinary(ensureNpm('@sentry/cli', '@sentry/cli@3.8.0'));
  mcpDir = ensureNpm('@sentry/mcp-server', '@sentry/mcp-server@0.39.0');
}, 600_000);

/** A bound project holding two issues (one with a stack trace and breadcrumbs), and a token of a member of its organisation. */
async function setUp(scopes = ALL_SCOPES) {
  const p = await boundProject(ctx);
  const org = Number(p.org.id);
  const email = `dev-${p.id}@shop.test`;
  await ctx.runtime.accounts.addUser({ org, email, role: 'member', password: 'correct horse battery staple' });
  const { token } = await ctx.runtime.tokens.create({ email, org }, { name: 'tools', scopes });
  const orgSlug = (await ctx.runtime.admin.showOrg(org)).slug!;
  const slug = p.project.slug!;
  const at = Date.now() - 60_000;
  const event = (i: number, type: string, value: string, release: string) => ({
    event_id: crypto.randomUUID().replace(/-/g, ''),
    timestamp: new Date(at + i * 1000).toISOString(),
    level: 'error',
    release,
    environment: 'production',
    user: { id: `cust-${i}`, email: `cust-${i}@shop.test` },
    exception: { values: [{ type, value, stacktrace: { frames: [{ filename: 'app/journal.py', function: 'post_entry', lineno: 42, context_line: '    raise JournalLocked(entry)', in_app: true }] } }] },
    breadcrumbs: { values: [{ timestamp: (at + i * 1000) / 1000 - 1, category: 'sql', message: 'SELECT * FROM journal WHERE id = 7' }] },
  });
  for (let i = 0; i < 3; i++) expect((await p.send(event(i, 'JournalLocked', 'journal 7 is locked', 'erp@17.0.4'))).status).toBe(202);
  expect((await p.send(event(3, 'KeyError', "'partner_id'", 'erp@17.0.5'))).status).toBe(202);
  await drained(ctx);
  const env = { ...process.env, SENTRY_URL: ctx.api, SENTRY_AUTH_TOKEN: token, SENTRY_ORG: orgSlug, SENTRY_PROJECT: slug, SENTRY_LOG_LEVEL: 'warn' };
  const sentryCli = async (...args: string[]) => {
    const res = await runToExit(cli, args, { env });
    if (res.status !== 0) throw new Error(`sentry-cli ${args.join(' ')} exited ${res.status}: ${res.stderr}${res.stdout}`);
    return res.stdout;
  };
  const issues = async (status = 'unresolved') => (await p.get(`/issues?status=${status}&order=id`)).body.issues as { id: string; title: string; status: string }[];
  return { ...p, token, orgSlug, slug, email, sentryCli, issues };
}

describe('sentry-cli 3.8', () => {
  it('info, organizations, projects, issues (with a query), events; each answer names Lookout’s data', { timeout: 120_000 }, async () => {
    const s = await setUp();
    expect(await s.sentryCli('info')).toContain(s.email);
    expect(await s.sentryCli('organizations', 'list')).toContain(s.orgSlug);
    expect(await s.sentryCli('projects', 'list', '--org', s.orgSlug)).toContain(s.slug);
    const listed = await s.sentryCli('issues', 'list', '-o', s.orgSlug, '-p', s.slug);
    expect(listed).toContain('journal 7 is locked');
    expect(listed).toContain(`${s.slug.toUpperCase()}-`);
    const narrowed = await s.sentryCli('issues', 'list', '-o', s.orgSlug, '-p', s.slug, '--query', 'release:erp@17.0.5');
    expect(narrowed).toContain('partner_id');
    expect(narrowed).not.toContain('journal 7 is locked');
    const events = await s.sentryCli('events', 'list', '-o', s.orgSlug, '-p', s.slug, '-U', '-T');
    expect(events.match(/journal 7 is locked/g)?.length).toBe(3);
    expect(events).toContain('cust-3@shop.test');
    // more than a page (50): sentry-cli follows the Link header
    for (let i = 0; i < 60; i++) expect((await s.send({ event_id: crypto.randomUUID().replace(/-/g, ''), timestamp: new Date().toISOString(), message: `batch ${i}` })).status).toBe(202);
    await drained(ctx);
    const many = await s.sentryCli('events', 'list', '-o', s.orgSlug, '-p', s.slug);
    expect(many.match(/batch \d+/g)?.length).toBe(60);
  });

  it('issues resolve, mute and unresolve change what Lookout’s API reads', { timeout: 120_000 }, async () => {
    const s = await setUp();
    const [locked, keyError] = await s.issues();
    await s.sentryCli('issues', 'resolve', '-o', s.orgSlug, '-p', s.slug, '-i', locked!.id);
    expect((await s.get(`/issues/${locked!.id}`)).body.status).toBe('resolved');
    await s.sentryCli('issues', 'mute', '-o', s.orgSlug, '-p', s.slug, '-i', keyError!.id);
    expect((await s.get(`/issues/${keyError!.id}`)).body.status).toBe('ignored');
    await s.sentryCli('issues', 'unresolve', '-o', s.orgSlug, '-p', s.slug, '-s', 'resolved');
    expect((await s.get(`/issues/${locked!.id}`)).body.status).toBe('unresolved');
    expect((await s.get(`/issues/${keyError!.id}`)).body.status).toBe('ignored');
  });

  it('releases new|finalize|list and deploys new|list; the deploy is on the release', { timeout: 120_000 }, async () => {
    const s = await setUp();
    await s.sentryCli('releases', 'new', '-p', s.slug, 'erp@17.1.0');
    await s.sentryCli('releases', 'finalize', 'erp@17.1.0');
    const releases = await s.sentryCli('releases', 'list', '-p', s.slug);
    for (const v of ['17.1.0', '17.0.4', '17.0.5']) expect(releases).toContain(v);
    await s.sentryCli('deploys', 'new', '-r', 'erp@17.1.0', '-e', 'production', '-n', 'blue');
    expect(await s.sentryCli('deploys', 'list', '-r', 'erp@17.1.0')).toMatch(/blue[\s\S]*production|production[\s\S]*blue/);
    const res = await fetch(`${ctx.api}/api/0/organizations/${s.orgSlug}/releases/${encodeURIComponent('erp@17.1.0')}/`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(await res.json()).toMatchObject({ version: 'erp@17.1.0', deployCount: 1, lastDeploy: { environment: 'production', name: 'blue' }, dateReleased: expect.any(String) });
    // the release page shows it
    const page = await call(ctx, 'GET', `/api/dashboard/projects/${s.id}/releases/${encodeURIComponent('erp@17.1.0')}/deploys`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(page.body.deploys).toEqual([{ environment: 'production', name: 'blue', url: null, started_at: null, finished_at: expect.any(String) }]);
  });
});

/** Sentry's MCP server started over stdio for the token, and a real MCP client; `tool` calls one and answers its text. */
async function mcp(token: string) {
  const modules = path.join(mcpDir, 'node_modules');
  const { Client } = await import(path.join(modules, '@modelcontextprotocol/sdk/dist/esm/client/index.js'));
  const { StdioClientTransport } = await import(path.join(modules, '@modelcontextprotocol/sdk/dist/esm/client/stdio.js'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(modules, '@sentry/mcp-server/dist/index.js'), `--access-token=${token}`, `--host=${new URL(ctx.api).host}`, '--insecure-http'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'lookout-test', version: '1.0.0' });
  await client.connect(transport);
  const tool = async (name: string, args: Record<string, unknown>) => {
    const answer = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text?: string }[] };
    const text = answer.content.map((c) => c.text ?? '').join('\n');
    if (answer.isError) throw new Error(`${name} failed: ${text}`);
    return text;
  };
  return { tool, close: () => client.close() };
}

describe('Sentry’s MCP server 0.39 through a real MCP client', () => {
  it('finds the organisation, projects, issues, an issue with its exception and breadcrumbs, releases and events; resolves an issue', { timeout: 180_000 }, async () => {
    const s = await setUp();
    const [locked] = await s.issues();
    const m = await mcp(s.token);
    try {
      expect(await m.tool('find_organizations', {})).toContain(s.orgSlug);
      expect(await m.tool('find_projects', { organizationSlug: s.orgSlug })).toContain(s.slug);
      const found = await m.tool('search_issues', { organizationSlug: s.orgSlug, projectSlugOrId: s.slug, query: 'is:unresolved release:erp@17.0.4' });
      expect(found).toContain('journal 7 is locked');
      expect(found).not.toContain('partner_id');
      const shortId = new RegExp(`${s.slug.toUpperCase()}-[0-9A-Z]+`).exec(found)![0];
      const issue = await m.tool('get_sentry_resource', { resourceType: 'issue', resourceId: shortId, organizationSlug: s.orgSlug });
      for (const text of ['JournalLocked', 'journal 7 is locked', 'post_entry', 'raise JournalLocked(entry)', 'cust-2@shop.test']) expect(issue).toContain(text);
      // 0.39 shows an issue's breadcrumbs through its catalog tool, from the same latest event
      const crumbs = await m.tool('execute_sentry_tool', { name: 'get_issue_breadcrumbs', arguments: { organizationSlug: s.orgSlug, issueId: shortId } });
      expect(crumbs).toContain('SELECT * FROM journal WHERE id = 7');
      expect(await m.tool('execute_sentry_tool', { name: 'find_releases', arguments: { organizationSlug: s.orgSlug } })).toContain('17.0.5');
      const events = await m.tool('search_events', { organizationSlug: s.orgSlug, projectSlug: s.slug, dataset: 'errors', query: 'level:error' });
      expect(events).toContain('partner_id');
      await m.tool('update_issue', { organizationSlug: s.orgSlug, issueId: shortId, status: 'resolved' });
      expect((await s.get(`/issues/${locked!.id}`)).body.status).toBe('resolved');
    } finally {
      await m.close();
    }
  });
});

describe('the API as tools read it', () => {
  it('pages with Sentry’s Link header, takes short ids, answers errors with detail, refuses a token without the scope', async () => {
    const s = await setUp();
    const auth = { authorization: `Bearer ${s.token}` };
    const first = await call(ctx, 'GET', `/api/0/projects/${s.orgSlug}/${s.slug}/issues/?per_page=1`, { headers: auth });
    expect(first.body).toHaveLength(1);
    expect(first.headers.get('link')).toMatch(/rel="next"; results="true"; cursor="0:1:0"/);
    const second = await call(ctx, 'GET', `/api/0/projects/${s.orgSlug}/${s.slug}/issues/?per_page=1&cursor=0:1:0`, { headers: auth });
    expect(second.body[0].id).not.toBe(first.body[0].id);
    expect(second.headers.get('link')).toMatch(/rel="next"; results="false"/);
    const short = first.body[0].shortId as string;
    expect((await call(ctx, 'GET', `/api/0/organizations/${s.orgSlug}/issues/${short}/`, { headers: auth })).body).toMatchObject({ id: first.body[0].id, permalink: expect.stringMatching(/^https?:\/\//) });
    // GitLab's paths name no organisation
    expect((await call(ctx, 'GET', `/api/0/issues/${first.body[0].id}/`, { headers: auth })).body).toMatchObject({ shortId: short });
    expect((await call(ctx, 'GET', `/api/0/issues/${short}/events/latest/`, { headers: auth })).body).toMatchObject({ groupID: first.body[0].id, entries: expect.arrayContaining([expect.objectContaining({ type: 'exception' })]) });
    expect((await call(ctx, 'GET', '/api/0/projects/', { headers: auth })).body).toEqual([expect.objectContaining({ slug: s.slug, organization: expect.objectContaining({ slug: s.orgSlug }) })]);
    const missing = await call(ctx, 'GET', `/api/0/organizations/${s.orgSlug}/issues/999999999/`, { headers: auth });
    expect(missing).toMatchObject({ status: 404, body: { detail: expect.stringContaining('999999999'), reason: 'issue_not_found' } });
    const reader = await ctx.runtime.tokens.create({ email: s.email, org: Number(s.org.id) }, { name: 'read', scopes: ['project:read'] });
    const refused = await call(ctx, 'PUT', `/api/0/organizations/${s.orgSlug}/issues/${short}/`, { headers: { authorization: `Bearer ${reader.token}` }, body: { status: 'resolved' } });
    expect(refused).toMatchObject({ status: 403, body: { detail: expect.stringContaining('project:write') } });
  });
});
