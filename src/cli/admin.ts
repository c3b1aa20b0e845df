/**
 * The admin CLI: each command prints exactly one JSON document on stdout;
 * a failure prints a message on stderr and exits non-zero. With no variable
 * set it reaches the stores that `npm start` runs.
 */
import type { AlertsChange } from '../store/projects.store.ts';
import type { Config } from '../../config/index.ts';
import path from 'node:path';
import { readInstance } from '../embedded/instance.ts';
import { storeUrls } from '../embedded/stores.ts';
import { AppError, NotFoundError } from '../errors.ts';
import { normalEmail } from '../services/accounts.service.ts';
import { makeLogger } from '../log.ts';
import { makeRuntime, StoreTimeoutError, type Runtime } from '../runtime.ts';
import type { RecountProgress } from '../state/sessions.state.ts';
import { parseTriggers, TRIGGERS } from '../domain/notifications.ts';
import { parseOptions, UsageError } from './usage.ts';
import { adminHelp, commandRows, ONE_WORD } from './admin-commands.ts';
import { backup, backupDepsOf, restore } from '../backup/backup.ts';
import { parseMonitorCommand } from './admin-monitor.ts';
import { defined, id, need, nonEmpty, onOff, OPTIONS, seats, wholeNumber, type Values } from './admin-options.ts';

/** An admin command read from its arguments: usage errors are found here, before any store is reached. */
export type AdminRun = (runtime: Runtime) => Promise<unknown>;

export function parseAdminCommand(args: string[]): AdminRun {
  // The command's words come before its first option: two of them, or one for `recount`, `backup`, `restore`.
  const firstOption = args.findIndex((a) => a.startsWith('-'));
  const positionals = args.slice(0, Math.min(ONE_WORD.has(args[0] ?? '') ? 1 : 2, firstOption === -1 ? args.length : firstOption));
  const [row] = commandRows(positionals).filter(([words]) => words.split(' ').length === positionals.length);
  if (!row) {
    const verbs = commandRows(positionals.slice(0, 1)).flatMap(([words]) => words.split(' ')[1]?.split('|') ?? []);
    if (positionals.length === 1 && verbs.length) throw new UsageError(`${positionals[0]} needs one of: ${verbs.join(', ')}`);
    throw new UsageError(`unknown admin command: ${positionals.join(' ') || '(none)'}`);
  }
  // Each command takes only the options its help line names.
  const allowed = [...row[1].matchAll(/--([a-z-]+)/g)].map((m) => m[1] as keyof typeof OPTIONS);
  const { _: extra, ...parsed } = parseOptions(args.slice(positionals.length), Object.fromEntries(allowed.map((o) => [o, OPTIONS[o]])));
  const values = parsed as Values;
  if (extra.length) throw new UsageError(`unexpected argument: ${extra.join(' ')}`);
  const [noun, verb] = positionals;
  if (noun === 'monitor' || noun === 'probe' || noun === 'maintenance') return parseMonitorCommand(noun, verb!, values);
  switch (positionals.join(' ')) {
    case 'org create': {
      const input = { name: need(values, 'name'), plan: values.plan ?? 'free', seats: seats(values) ?? null };
      return (rt) => rt.admin.createOrg(input);
    }
    case 'org list':
      return async (rt) => ({ orgs: await rt.admin.listOrgs() });
    case 'org set': {
      const [org, set] = [id(values, 'org'), defined({ name: values.name, plan: values.plan, seats: seats(values) })];
      return (rt) => rt.admin.setOrg(org, set);
    }
    case 'org show': {
      const org = id(values, 'org');
      return (rt) => rt.admin.showOrg(org);
    }
    case 'project create': {
      const input = { org: id(values, 'org'), name: need(values, 'name'), securityMonitoring: onOff(values, 'security-monitoring') ?? true };
      return (rt) => rt.admin.createProject(input);
    }
    case 'project list': {
      const org = values.org === undefined ? undefined : id(values, 'org');
      return async (rt) => ({ projects: await rt.admin.listProjects(org) });
    }
    case 'project set': {
      const project = id(values, 'project');
      const retention = values['event-retention-days'] === 'default' ? null : wholeNumber(values, 'event-retention-days');
      const set = defined({
        name: values.name,
        enabled: onOff(values, 'enabled'),
        security_monitoring: onOff(values, 'security-monitoring'),
        event_retention_days: retention,
        silent_after_minutes: values['silent-after-minutes'] === 'default' ? null : wholeNumber(values, 'silent-after-minutes'),
      });
      return (rt) => rt.admin.setProject(project, set);
    }
    case 'project show': {
      const project = id(values, 'project');
      return (rt) => rt.admin.showProject(project);
    }
    case 'project unbind': {
      const project = id(values, 'project');
      return (rt) => rt.admin.unbind(project);
    }
    case 'key rotate': {
      const kind = need(values, 'kind');
      if (kind !== 'secret' && kind !== 'public') throw new UsageError('--kind takes secret or public');
      const project = id(values, 'project');
      return (rt) => rt.admin.rotateKey(project, kind);
    }
    case 'member add':
    case 'member remove':
    case 'invite add':
    case 'invite remove':
    case 'email-rule add':
    case 'email-rule remove': {
      const list = noun === 'member' ? 'members' : noun === 'invite' ? 'invites' : 'email_rules';
      const [org, email] = [id(values, 'org'), need(values, 'email')];
      return (rt) => rt.admin.person(org, list, verb as 'add' | 'remove', email);
    }
    case 'alerts set': {
      const project = id(values, 'project');
      const set = defined({
        threshold: wholeNumber(values, 'threshold'),
        window_seconds: wholeNumber(values, 'window-seconds'),
        cooldown_seconds: wholeNumber(values, 'cooldown-seconds'),
        stuffing_threshold: wholeNumber(values, 'stuffing-threshold'),
        decision_seconds: wholeNumber(values, 'decision-seconds'),
        decision_mode: values['decision-mode'],
        allowlist: values.allowlist
          ?.split(',')
          .map((e) => e.trim())
          .filter(Boolean),
        escalate: onOff(values, 'escalate'),
        decision_max_seconds: wholeNumber(values, 'decision-max-seconds'),
        decision_types:
          values['brute-force-decision'] || values['stuffing-decision']
            ? defined({ brute_force: values['brute-force-decision'], credential_stuffing: values['stuffing-decision'] })
            : undefined,
      });
      // the schema (schemas/alerts.json) refuses a mode or decision type it does not name, as for the dashboard
      return (rt) => rt.admin.setAlerts(project, set as AlertsChange);
    }
    case 'user add': {
      const input = { org: id(values, 'org'), email: need(values, 'email'), role: need(values, 'role') };
      if (input.role !== 'owner' && input.role !== 'member') throw new UsageError('--role takes owner or member');
      const role = input.role;
      const fromStdin = values['password-stdin'] === true;
      return async (rt) => {
        const password = fromStdin ? await readPassword() : undefined;
        const user = await rt.accounts.addUser({ org: input.org, email: input.email, role, password });
        const api = readInstance(rt.config.dataDir)?.api_url;
        return 'set_password_path' in user && api ? { ...user, set_password_url: `${api}${user.set_password_path}` } : user;
      };
    }
    case 'user remove': {
      const input = { org: id(values, 'org'), email: need(values, 'email') };
      return async (rt) => {
        const removed = await rt.accounts.removeUser(input.org, input.email);
        await rt.admin.person(input.org, 'members', 'remove', input.email);
        if (!removed) throw new NotFoundError('user_not_found', `no user ${input.email} in organisation ${input.org}`);
        return { removed: normalEmail(input.email), org: String(input.org) };
      };
    }
    case 'user disable':
    case 'user enable': {
      const input = { org: id(values, 'org'), email: need(values, 'email') };
      const disabled = positionals[1] === 'disable';
      return async (rt) => {
        if (!(await rt.accounts.setDisabled(input.org, input.email, disabled)))
          throw new NotFoundError('user_not_found', `no user ${input.email} in organisation ${input.org}`);
        return { email: normalEmail(input.email), org: String(input.org), disabled };
      };
    }
    case 'user sessions': {
      const input = { org: id(values, 'org'), email: need(values, 'email') };
      return async (rt) => ({ sessions: await rt.accounts.listSessions((await rt.accounts.userOf(input.org, input.email))._id, null) });
    }
    case 'token create': {
      const input = {
        org: id(values, 'org'),
        email: need(values, 'email'),
        name: need(values, 'name'),
        scopes: need(values, 'scopes')
          .split(',')
          .map((s) => s.trim()),
      };
      return async (rt) => {
        const user = await rt.accounts.userOf(input.org, input.email);
        return rt.tokens.create({ email: user._id, org: user.org_id }, input);
      };
    }
    case 'token list': {
      const input = { org: id(values, 'org'), email: need(values, 'email') };
      return async (rt) => ({ tokens: await rt.tokens.list((await rt.accounts.userOf(input.org, input.email))._id) });
    }
    case 'token revoke': {
      const input = { org: id(values, 'org'), email: need(values, 'email'), token: need(values, 'token') };
      return async (rt) => rt.tokens.revoke((await rt.accounts.userOf(input.org, input.email))._id, input.token);
    }
    case 'notify add': {
      const project = id(values, 'project');
      if ((values.webhook === undefined) === (values.email === undefined)) throw new UsageError('notify add takes one of --webhook URL or --email ADDRESS');
      if (values.email !== undefined && values.format !== undefined) throw new UsageError('--format is for webhooks');
      const triggers = parseTriggers(values.on);
      if ('unknown' in triggers) throw new UsageError(`--on: unknown trigger ${triggers.unknown.join(', ')}; the triggers are ${TRIGGERS.join(', ')}`);
      const crashFree = values['crash-free-below'];
      if (crashFree !== undefined && !/^\d{1,3}(\.\d{1,2})?$/.test(crashFree)) throw new UsageError('--crash-free-below takes a percentage such as 99.5');
      // The service checks the values against schemas/channel.json, as for the dashboard.
      const input = defined({
        webhook: values.webhook,
        email: values.email,
        format: values.format,
        on: triggers.on,
        environment: values.environment,
        level: values.level,
        frequency: nonEmpty(
          defined({
            count: wholeNumber(values, 'frequency-count'),
            minutes: wholeNumber(values, 'frequency-minutes'),
            interval_minutes: wholeNumber(values, 'interval-minutes'),
          }),
        ),
        crash_free: nonEmpty(
          defined({ threshold: crashFree === undefined ? undefined : Number(crashFree), min_sessions: wholeNumber(values, 'min-sessions') }),
        ),
      });
      return (rt) => rt.notifications.add(project, input);
    }
    case 'notify list': {
      const project = id(values, 'project');
      return (rt) => rt.notifications.list(project);
    }
    case 'notify deliveries': {
      const project = id(values, 'project');
      const channel = values.channel === undefined ? undefined : id(values, 'channel');
      return (rt) => rt.notifications.deliveries(project, { channel });
    }
    case 'notify remove':
    case 'notify test':
    case 'notify resume':
    case 'notify rotate': {
      const [project, channel] = [id(values, 'project'), id(values, 'channel')];
      const act = { remove: 'remove', test: 'test', resume: 'resume', rotate: 'rotateSecret' } as const;
      return (rt) => rt.notifications[act[verb as keyof typeof act]](project, channel);
    }
    case 'decisions list': {
      const project = id(values, 'project');
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        return rt.decisions.list(project, new Date());
      };
    }
    case 'decisions lift': {
      const [project, decision] = [id(values, 'project'), need(values, 'decision')];
      return (rt) => rt.decisions.lift(project, decision, new Date());
    }
    case 'bouncer add': {
      const [project, name] = [id(values, 'project'), need(values, 'name')];
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        return rt.bouncers.add(project, name);
      };
    }
    case 'bouncer list': {
      const project = id(values, 'project');
      return async (rt) => {
        await rt.admin.showProject(project);
        return rt.bouncers.list(project);
      };
    }
    case 'bouncer revoke': {
      const [project, bouncer] = [id(values, 'project'), need(values, 'bouncer')];
      return (rt) => rt.bouncers.revoke(project, bouncer);
    }
    case 'recount': {
      const project = id(values, 'project');
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        // How far it got, on standard error: a recount of a large project takes minutes, and one stopped is resumed.
        const report = (p: RecountProgress) =>
          process.stderr.write(
            `recount: ${p.batches} raw batches, ${p.entries} sessions replayed, through ${new Date(p.at || Date.now()).toISOString()}${p.resumed > 0 ? ` (resumed after ${p.resumed})` : ''}\n`,
          );
        return { project: String(project), ...(await rt.keeper.rebuild(project, new Date(), report)) };
      };
    }
    case 'backup': {
      const [file, withoutEvents] = [need(values, 'out'), values['without-events'] === true];
      return (rt) => backup(backupDepsOf(rt), file, { withoutEvents });
    }
    case 'restore': {
      const [file, replace] = [need(values, 'in'), values.replace === true];
      return async (rt) => {
        const rebuild = (project: number) => rt.keeper.rebuild(project, new Date());
        const { manifest, projects } = await restore({ db: rt.mongo.db, redis: rt.redis, prefix: rt.config.queuePrefix, log: rt.log, cacheDir: rt.config.cacheDir, rebuild }, file, { replace });
        return { restored: file, projects, manifest, next: 'restart Lookout: its processes read keys and settings at start' };
      };
    }
    default:
      throw new UsageError(`unknown admin command: ${positionals.join(' ') || '(none)'}`);
  }
}


/** The password on standard input (a pipe or a prompt), without its final newline; never echoed or logged. */
async function readPassword(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('--password-stdin: no password on standard input');
  return password;
}

/** How long the admin CLI waits for a store before saying how to reach it. */
const STORE_TIMEOUT_MS = 3000;

/** Runs `lookout admin …`; returns the exit code (a usage error is thrown to the caller: exit 2). */
export async function runAdmin(config: Config, args: string[]): Promise<number> {
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(adminHelp());
    return 0;
  }
  if (args[0] === 'help') {
    process.stdout.write(adminHelp(args.slice(1)));
    return 0;
  }
  const run = parseAdminCommand(args);
  const urls = storeUrls(config);
  let runtime: Runtime | undefined;
  try {
    runtime = await makeRuntime(config, urls, makeLogger('silent', 'admin'), { storeTimeoutMs: STORE_TIMEOUT_MS });
    process.stdout.write(`${JSON.stringify(await run(runtime), null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      process.stderr.write(`${err.reason}: ${err.message}\n`);
      return 1;
    }
    const unreachable = storeUnreachable(err, config, urls);
    process.stderr.write(`${unreachable ?? (err as Error).message}\n`);
    return 1;
  } finally {
    await runtime?.close();
  }
}

/** The message for a store that did not answer: which one, at which URL, and the variables that would fix it. */
function storeUnreachable(err: unknown, config: Config, urls: { redisUrl: string; mongoUrl: string }): string | null {
  const name = (err as Error).name;
  const store =
    name === 'MongoServerSelectionError' || name === 'MongoNetworkError'
      ? { what: 'MongoDB', url: urls.mongoUrl, variable: 'MONGODB_URL' }
      : err instanceof StoreTimeoutError
        ? { what: 'Redis', url: urls.redisUrl, variable: config.redisCluster ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL' }
        : null;
  if (!store) return null;
  const running = readInstance(config.dataDir);
  const hint = running
    ? `the Lookout running in ${path.resolve(config.dataDir)} (PID ${running.pid}) recorded this URL; is it still starting?`
    : `no Lookout runs in ${path.resolve(config.dataDir)}: start it with npm start, set LOOKOUT_DATA_DIR to the data folder of the one that runs, or set ${store.variable}`;
  return `cannot reach ${store.what} at ${store.url} within ${STORE_TIMEOUT_MS / 1000} s; ${hint}`;
}
