/**
 * The admin CLI: each command prints exactly one JSON document on stdout;
 * a failure prints a message on stderr and exits non-zero. With no variable
 * set it reaches the stores that `npm start` runs.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../../config/index.ts';
import { storeUrls } from '../embedded/stores.ts';
import { AppError } from '../errors.ts';
import { makeLogger } from '../log.ts';
import { makeRuntime, type Runtime } from '../runtime.ts';

const HELP = `lookout admin <command>

  org create --name N [--plan P] [--seats N|unlimited]
  org set --org ID [--name N] [--plan P] [--seats N|unlimited]
  org show --org ID
  project create --org ID --name N [--security-monitoring on|off]
  project set --project ID [--name N] [--enabled on|off] [--security-monitoring on|off]
  project show --project ID
  project unbind --project ID
  key rotate --project ID --kind secret|public
  member add|remove --org ID --email E
  invite add|remove --org ID --email E
  email-rule add|remove --org ID --email E
  alerts set --project ID [--threshold N] [--window-seconds S] [--cooldown-seconds S] [--stuffing-threshold N]
  recount --project ID        rebuild the project's session state in Redis and its rollups from the raw batches
`;

export class UsageError extends Error {}

const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  seats: { type: 'string' },
  org: { type: 'string' },
  project: { type: 'string' },
  kind: { type: 'string' },
  email: { type: 'string' },
  enabled: { type: 'string' },
  'security-monitoring': { type: 'string' },
  threshold: { type: 'string' },
  'window-seconds': { type: 'string' },
  'cooldown-seconds': { type: 'string' },
  'stuffing-threshold': { type: 'string' },
} as const;

type Values = Partial<Record<keyof typeof OPTIONS, string>>;

function need(values: Values, name: keyof Values): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
function id(values: Values, name: 'org' | 'project'): number {
  const text = need(values, name);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`--${name} must be a numeric id`);
  return Number(text);
}
function onOff(values: Values, name: 'enabled' | 'security-monitoring'): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} takes on or off`);
  return value === 'on';
}
function seats(values: Values): number | null | undefined {
  const value = values.seats;
  if (value === undefined) return undefined;
  if (value === 'unlimited') return null;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError('--seats takes a whole number or unlimited');
  return Number(value);
}
function positive(values: Values, name: keyof Values, max: number): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--${name} takes a whole number from 1 to ${max}`);
  }
  return Number(value);
}
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Runs one admin command on a runtime and returns the JSON document to print. */
export async function adminCommand(runtime: Runtime, args: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  const [noun, verb] = positionals;
  const admin = runtime.admin;
  switch (`${noun} ${verb}`) {
    case 'org create':
      return admin.createOrg({ name: need(values, 'name'), plan: values.plan ?? 'free', seats: seats(values) ?? null });
    case 'org set':
      return admin.setOrg(id(values, 'org'), defined({ name: values.name, plan: values.plan, seats: seats(values) }));
    case 'org show':
      return admin.showOrg(id(values, 'org'));
    case 'project create':
      return admin.createProject({
        org: id(values, 'org'),
        name: need(values, 'name'),
        securityMonitoring: onOff(values, 'security-monitoring') ?? true,
      });
    case 'project set':
      return admin.setProject(
        id(values, 'project'),
        defined({ name: values.name, enabled: onOff(values, 'enabled'), security_monitoring: onOff(values, 'security-monitoring') }),
      );
    case 'project show':
      return admin.showProject(id(values, 'project'));
    case 'project unbind':
      return admin.unbind(id(values, 'project'));
    case 'key rotate': {
      const kind = need(values, 'kind');
      if (kind !== 'secret' && kind !== 'public') throw new UsageError('--kind takes secret or public');
      return admin.rotateKey(id(values, 'project'), kind);
    }
    case 'member add':
    case 'member remove':
    case 'invite add':
    case 'invite remove':
    case 'email-rule add':
    case 'email-rule remove': {
      const list = noun === 'member' ? 'members' : noun === 'invite' ? 'invites' : 'email_rules';
      return admin.person(id(values, 'org'), list, verb as 'add' | 'remove', need(values, 'email'));
    }
    case 'alerts set':
      return admin.setAlerts(
        id(values, 'project'),
        defined({
          threshold: positive(values, 'threshold', 100_000),
          window_seconds: positive(values, 'window-seconds', 30 * 86_400),
          cooldown_seconds: positive(values, 'cooldown-seconds', 30 * 86_400),
          stuffing_threshold: positive(values, 'stuffing-threshold', 100_000),
        }),
      );
    case 'recount undefined': {
      const project = id(values, 'project');
      await admin.showProject(project); // 404 for an unknown project
      return { project: String(project), ...(await runtime.keeper.rebuild(project, new Date())) };
    }
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}\n\n${HELP}`);
  }
}

export async function runAdmin(config: Config, args: string[]): Promise<number> {
  if (args.length === 0 || args[0] === 'help' || args.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  let runtime: Runtime | undefined;
  try {
    runtime = await makeRuntime(config, storeUrls(config), makeLogger('silent', 'admin'));
    const result = await adminCommand(runtime, args);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 2;
    }
    if (err instanceof AppError) {
      process.stderr.write(`${err.reason}: ${err.message}\n`);
      return 1;
    }
    if ((err as Error).name === 'MongoServerSelectionError') {
      process.stderr.write(
        `cannot reach MongoDB at ${storeUrls(config).mongoUrl}: is Lookout running (npm start), or is MONGODB_URL right?\n`,
      );
      return 1;
    }
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  } finally {
    await runtime?.close();
  }
}
