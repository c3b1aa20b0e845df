/** Spec 2.1–2.4, 3.3, 4.1–4.3, 5 and 7 against real FerretDB and Redis. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundProject, call, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const INSTANCE = 'inst-aaaa-0001';

describe('POST /api/v1/sdk/activate', () => {
  it('binds an unbound key and answers with project data (3.3 row 1)', async () => {
    const { secret, publicKey, project, org } = await makeProject(ctx, { plan: 'business', seats: 10 });
    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', {
      key: secret,
      body: { instance_id: INSTANCE, base_url: 'https://erp.example', platform: 'odoo', platform_version: '17.0', terms_version: '2024-01', accepted_by: 'ops@example.com' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      project: { id: project.id, name: 'shop' },
      org: { id: org.id, name: 'Acme' },
      enabled: true,
      public_key: publicKey,
      features: { security_monitoring: true, plan: 'business', seats: 10 },
    });
    expect(res.headers.get('x-request-id')).toMatch(/.+/);
  });

  it('answers 200 again for the same instance and updates its fields (3.3 row 2)', async () => {
    const { secret, project } = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-same-0001', platform_version: '1' } });
    const again = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-same-0001', platform_version: '2' } });
    expect(again.status).toBe(200);
    const shown = await ctx.runtime.admin.showProject(Number(project.id));
    expect(shown.installation?.platform_version).toBe('2');
  });

  it('refuses a second installation on a bound key: project_has_instance', async () => {
    const { secret } = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-first-001' } });
    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-second-01' } });
    expect(res.status).toBe(409);
    expect(res.body.reason).toBe('project_has_instance');
    expect(res.body.message).toEqual(expect.any(String));
  });

  it('refuses an installation bound to another project: instance_bound_elsewhere', async () => {
    const a = await makeProject(ctx);
    const b = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: a.secret, body: { instance_id: 'inst-shared-01' } });
    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: b.secret, body: { instance_id: 'inst-shared-01' } });
    expect(res.status).toBe(409);
    expect(res.body.reason).toBe('instance_bound_elsewhere');
    // b stays unbound and can take another installation
    const other = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: b.secret, body: { instance_id: 'inst-other-01' } });
    expect(other.status).toBe(200);
  });

  it('lets the dashboard (admin) unbind, after which another installation may activate', async () => {
    const { secret, project } = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-old-0001' } });
    await ctx.runtime.admin.unbind(Number(project.id));
    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-new-0001' } });
    expect(res.status).toBe(200);
  });

  it('reports seats null for an unlimited plan and enabled false for a disabled project', async () => {
    const { secret, project } = await makeProject(ctx, { plan: 'enterprise', seats: null });
    await ctx.runtime.admin.setProject(Number(project.id), { enabled: false, security_monitoring: false });
    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-unlim-01' } });
    expect(res.body.features).toEqual({ security_monitoring: false, plan: 'enterprise', seats: null });
    expect(res.body.enabled).toBe(false);
  });

  it('rejects an instance_id outside 8..128 characters with the failing path', async () => {
    const { secret } = await makeProject(ctx);
    for (const instance_id of ['short', 'x'.repeat(129), 12345678, null]) {
      const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id } });
      expect(res.status).toBe(400);
      expect(res.body.reason).toBe('invalid_body');
      expect(res.body.errors[0].path).toBe('/instance_id');
    }
  });
});

describe('authentication (spec 5)', () => {
  it('401 for a missing or unknown key', async () => {
    const missing = await call(ctx, 'GET', '/api/v1/sdk/config');
    expect(missing.status).toBe(401);
    expect(missing.body.reason).toBe('missing_key');
    const unknown = await call(ctx, 'GET', '/api/v1/sdk/config', { key: 'lk_sk_nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.reason).toBe('unknown_key');
  });

  it('403 for the public key on secret-key endpoints', async () => {
    const { publicKey } = await makeProject(ctx);
    for (const [method, path, body] of [
      ['POST', '/api/v1/sdk/activate', { instance_id: 'inst-pub-0001' }],
      ['GET', '/api/v1/sdk/config', undefined],
      ['PUT', '/api/v1/sdk/contacts', { companies: [] }],
    ] as const) {
      const res = await call(ctx, method, path, { key: publicKey, body });
      expect(res.status, path).toBe(403);
      expect(res.body.reason).toBe('secret_key_required');
    }
  });

  it('after activation requires X-Service-Instance; a different one is told the key is bound elsewhere', async () => {
    const { secret } = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-auth-0001' } });
    const missing = await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret });
    expect(missing.status).toBe(403);
    expect(missing.body.reason).toBe('instance_required');
    const wrong = await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret, instance: 'inst-auth-9999' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.reason).toBe('instance_mismatch');
    expect(wrong.body.message).toMatch(/bound to a different instance/);
    const right = await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret, instance: 'inst-auth-0001' });
    expect(right.status).toBe(200);
  });

  it('a rotated secret key replaces the old one; the binding stays', async () => {
    const { secret, project } = await makeProject(ctx);
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-rot-0001' } });
    const { secret_key } = (await ctx.runtime.admin.rotateKey(Number(project.id), 'secret')) as { secret_key: string };
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret, instance: 'inst-rot-0001' })).status).toBe(401);
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret_key, instance: 'inst-rot-0001' })).status).toBe(200);
  });
});

describe('GET /api/v1/sdk/config', () => {
  it('returns public_key and features, and sees plan changes and a new public key', async () => {
    const { secret, org, project } = await makeProject(ctx, { plan: 'starter', seats: 3 });
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: 'inst-conf-0001' } });
    await ctx.runtime.admin.setOrg(Number(org.id), { plan: 'business', seats: null });
    const { public_key } = (await ctx.runtime.admin.rotateKey(Number(project.id), 'public')) as { public_key: string };
    const res = await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret, instance: 'inst-conf-0001' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ public_key, enabled: true, features: { security_monitoring: true, plan: 'business', seats: null } });
  });
});

describe('PUT /api/v1/sdk/contacts', () => {
  async function bound(seats: number | null) {
    const p = await boundProject(ctx, { plan: 'team', seats });
    return { ...p, put: (companies: unknown) => p.v1('PUT', '/sdk/contacts', { companies }) };
  }
  const person = (id: string, email?: string) => ({ id, name: `P ${id}`, ...(email ? { email } : {}) });

  it('counts distinct people across contacts, members, invites and email rules', async () => {
    const p = await bound(10);
    const orgId = Number(p.org.id);
    await ctx.runtime.admin.person(orgId, 'members', 'add', 'Boss@Acme.test');
    await ctx.runtime.admin.person(orgId, 'invites', 'add', 'new@acme.test');
    await ctx.runtime.admin.person(orgId, 'email_rules', 'add', 'rule@acme.test');
    const res = await p.put([
      { id: 'c1', name: 'One', people: [person('1', 'boss@acme.test'), person('2', 'a@one.test'), person('3')] },
      { id: 'c2', name: 'Two', people: [person('1', 'A@ONE.test'), person('3')] },
    ]);
    // boss, new, rule, a@one, c1/3, c2/3
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ used: 6, seats: 10, plan: 'team' });
  });

  it('409 seats_exceeded when the list adds people beyond the seats; nothing is written', async () => {
    const p = await bound(2);
    expect((await p.put([{ id: 'c', people: [person('1', 'x@t.test'), person('2', 'y@t.test')] }])).status).toBe(200);
    const res = await p.put([{ id: 'c', people: [person('1', 'x@t.test'), person('2', 'y@t.test'), person('3', 'z@t.test')] }]);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ reason: 'seats_exceeded', seats: 2, used: 3, plan: 'team' });
    const again = await p.put([{ id: 'c', people: [person('1', 'x@t.test'), person('2', 'y@t.test')] }]);
    expect(again.body.used).toBe(2);
  });

  it('always accepts a list that only shrinks, even over the seats', async () => {
    const p = await bound(null);
    await p.put([{ id: 'c', people: [person('1', 'a@t.test'), person('2', 'b@t.test'), person('3', 'c@t.test')] }]);
    await ctx.runtime.admin.setOrg(Number(p.org.id), { seats: 1 });
    const res = await p.put([{ id: 'c', people: [person('1', 'a@t.test'), person('2', 'b@t.test')] }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ used: 2, seats: 1, plan: 'team' });
  });

  it('counts seats used by the contact lists of other projects of the organisation', async () => {
    const p = await bound(3);
    const second = await ctx.runtime.admin.createProject({ org: Number(p.org.id), name: 'second', securityMonitoring: false });
    await call(ctx, 'POST', '/api/v1/sdk/activate', { key: second.secret_key, body: { instance_id: 'inst-second-prj' } });
    await p.put([{ id: 'c', people: [person('1', 'a@t.test'), person('2', 'b@t.test')] }]);
    const res = await call(ctx, 'PUT', '/api/v1/sdk/contacts', {
      key: second.secret_key,
      instance: 'inst-second-prj',
      body: { companies: [{ id: 'd', people: [person('9', 'a@t.test'), person('8', 'q@t.test'), person('7', 'r@t.test')] }] },
    });
    expect(res.status).toBe(409);
    expect(res.body.used).toBe(4);
  });
});

describe('bad input on every body (spec 7)', () => {
  const activated = () => boundProject(ctx);
  const cases: { name: string; status: number; reason: string; opts: Record<string, unknown> }[] = [
    { name: 'malformed JSON', status: 400, reason: 'malformed_json', opts: { raw: '{"companies": [' } },
    { name: 'wrong content type', status: 415, reason: 'unsupported_media_type', opts: { raw: 'companies=1', contentType: 'application/x-www-form-urlencoded' } },
    { name: 'no body', status: 415, reason: 'unsupported_media_type', opts: {} },
    { name: 'oversize body', status: 413, reason: 'payload_too_large', opts: { raw: JSON.stringify({ companies: [{ id: 'c', name: 'x'.repeat(2_000_000), people: [] }] }) } },
    { name: 'wrong type', status: 400, reason: 'invalid_body', opts: { body: { companies: 'all of them' } } },
    { name: 'unknown key', status: 400, reason: 'invalid_body', opts: { body: { companies: [], extra: 1 } } },
    { name: '$-prefixed key', status: 400, reason: 'forbidden_key', opts: { body: { companies: [{ id: 'c', people: [{ id: '1', $where: 'x' }] }] } } },
    { name: 'dotted key', status: 400, reason: 'forbidden_key', opts: { body: { companies: [{ id: 'c', people: [], 'a.b': 1 }] } } },
    { name: '__proto__ key', status: 400, reason: 'forbidden_key', opts: { raw: '{"companies": [], "__proto__": {"x": 1}}' } },
    { name: 'array body', status: 400, reason: 'invalid_body', opts: { body: [] } },
    { name: 'deep nesting', status: 400, reason: 'too_deep', opts: { raw: `{"companies":${'['.repeat(100)}${']'.repeat(100)}}` } },
  ];
  for (const c of cases) {
    it(`PUT contacts: ${c.name} → ${c.status} ${c.reason}`, async () => {
      const p = await activated();
      const res = await call(ctx, 'PUT', '/api/v1/sdk/contacts', { key: p.secret, instance: p.instance, ...c.opts });
      expect(res.status).toBe(c.status);
      expect(res.body).toMatchObject({ reason: c.reason, message: expect.any(String) });
      // nothing was written
      expect(await ctx.runtime.mongo.db.collection('contacts').countDocuments({ _id: Number(p.project.id) } as never)).toBe(0);
    });
  }

  it('activate: malformed JSON, wrong type and unknown keys are 4xx with a JSON body', async () => {
    const { secret } = await makeProject(ctx);
    const bad = [
      { raw: 'not json' },
      { body: { instance_id: 'inst-x-000001', unknown: true } },
      { body: { instance_id: 'inst-x-000001', platform: 7 } },
      { body: { instance_id: 'inst-x-000001', $set: { enabled: false } } },
      { raw: '{"instance_id": "inst-x-000001"}', contentType: 'text/plain' },
    ];
    for (const opts of bad) {
      const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, ...opts });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.reason).toEqual(expect.any(String));
    }
    const shown = await ctx.runtime.stores.projects.bySecretHash((await import('../src/crypto/keys.ts')).hashSecret(secret));
    expect(shown?.instance_id).toBeNull();
  });

  it('stores hostile strings as data, unchanged', async () => {
    const p = await activated();
    const hostile = ['<script>alert(1)</script>', "'; DROP TABLE x; --", '{"$gt": ""}', 'nul\u0000byte', '\u202eevil', '😀'.repeat(10)];
    const res = await call(ctx, 'PUT', '/api/v1/sdk/contacts', {
      key: p.secret,
      instance: p.instance,
      body: { companies: [{ id: 'c', name: hostile.join('|'), people: hostile.map((h, i) => ({ id: String(i), name: h })) }] },
    });
    expect(res.status).toBe(200);
    const doc = await ctx.runtime.mongo.db.collection('contacts').findOne({ _id: Number(p.project.id) } as never);
    expect(doc?.companies[0].people.map((x: { name: string }) => x.name)).toEqual(hostile);
  });

  it('unknown routes are a JSON 404', async () => {
    const res = await call(ctx, 'GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.reason).toBe('route_not_found');
  });

  it.each([
    ['POST', '/api/v1/sdk/contacts', ['PUT']],
    ['DELETE', '/api/v1/issues', ['HEAD', 'GET']],
    ['PUT', '/api/v1/events', ['POST']],
  ])('%s %s is a JSON 405 with Allow', async (method, path, allowed) => {
    const res = await call(ctx, method, path);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allowed.join(', '));
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toEqual({ reason: 'method_not_allowed', message: `${path} does not take ${method}; it takes ${allowed.join(', ')}`, allowed });
  });
});
