/** The admin CLI's commands: words, options and what each does; the help text and the parser read this one list. */
import { DEFAULT_TRIGGERS, TRIGGERS } from '../domain/notifications.ts';
import { TOKEN_SCOPES } from '../store/tokens.store.ts';
import { MONITOR_COMMANDS } from './admin-monitor.ts';
import { UsageError } from './usage.ts';

/** Every admin command: its words, options and what it does; the help text is made from this list. */
export const ADMIN_COMMANDS = [
  ['org create', '--name N [--plan P] [--seats N|unlimited]', 'new organisation (defaults: plan free, seats unlimited)'],
  ['org list', '', 'every organisation: id, name, plan, seats'],
  ['org set', '--org ID [--name N] [--plan P] [--seats N|unlimited]', 'change name, plan or seats'],
  ['org show', '--org ID', 'the organisation with its people and used seats'],
  ['project create', '--org ID --name N [--security-monitoring on|off]', 'new project; prints its secret key (only here and on rotation)'],
  ['project list', '[--org ID]', "every project, or one organisation's; never a secret key"],
  ['project set', '--project ID [--name N] [--enabled on|off] [--security-monitoring on|off] [--event-retention-days N|default] [--silent-after-minutes N|default]', 'change a project'],
  ['project show', '--project ID', 'project, binding and alert settings'],
  ['project unbind', '--project ID', 'free the project and its installation so either can activate again'],
  ['key rotate', '--project ID --kind secret|public', 'new key; a rotated secret keeps the binding'],
  ['member add|remove', '--org ID --email E', 'organisation members (count against seats)'],
  ['invite add|remove', '--org ID --email E', 'pending invitations (count against seats)'],
  ['email-rule add|remove', '--org ID --email E', 'email rules (count against seats)'],
  [
    'alerts set',
    '--project ID [--threshold N] [--window-seconds S] [--cooldown-seconds S] [--stuffing-threshold N] [--decision-seconds S] [--decision-mode enforce|monitor] [--allowlist LIST] [--escalate on|off] [--decision-max-seconds S] [--brute-force-decision ban|captcha] [--stuffing-decision ban|captcha]',
    "sign-in burst detection; how long a decision holds (0: none); monitor: issues without decisions; LIST: comma-separated addresses, CIDR ranges and actors that never get a decision ('' for none); escalate: a repeat offender's decision holds twice as long, up to the maximum",
  ],
  ['decisions list', '--project ID', 'the active decisions made by sign-in bursts'],
  ['decisions lift', '--project ID --decision ID', 'end a decision now; installations see it removed at their next poll'],
  ['bouncer add', '--project ID --name N', "a CrowdSec bouncer key for the project's decisions; prints the key (only here)"],
  ['bouncer list', '--project ID', "the project's bouncers with each one's last pull (address, version), never a key"],
  ['bouncer revoke', '--project ID --bouncer ID', 'revoke a bouncer key: its next pull is refused (403)'],
  [
    'notify add',
    '--project ID (--webhook URL [--format json|slack] | --email ADDRESS) [--on TRIGGERS] [--environment E] [--level L] [--frequency-count N] [--frequency-minutes M] [--interval-minutes I] [--crash-free-below X] [--min-sessions K]',
    `a notification channel; TRIGGERS: comma-separated ${TRIGGERS.join(", ")} (default: ${DEFAULT_TRIGGERS.join(", ")}); prints a webhook's signing secret (only here and on rotation)`,
  ],
  ['notify list', '--project ID', "the project's channels, never a secret"],
  ['notify remove', '--project ID --channel ID', 'remove a channel'],
  ['notify test', '--project ID --channel ID', 'send a test notification through the queue'],
  ['notify resume', '--project ID --channel ID', 'resume a channel paused after ten failed deliveries in a row'],
  ['notify rotate', '--project ID --channel ID', 'a new signing secret for a webhook; prints it (only here)'],
  ['notify deliveries', '--project ID [--channel ID]', 'the newest deliveries, each with its attempts'],
  ...MONITOR_COMMANDS,
  ['recount', '--project ID', "rebuild the project's hot state and rollups from its raw batches and stored events"],
  [
    'backup',
    '--out FILE [--without-events]',
    'an online backup of everything stored (one compressed, checksummed file with a manifest) while Lookout runs; --without-events: the configuration alone (organisations, projects, keys, people, channels, monitors, settings)',
  ],
  ['restore', '--in FILE [--replace]', "a backup's contents onto an empty store, checked whole first; --replace: in place of what the store holds. Restart Lookout after it"],
  [
    'user add',
    '--org ID --email E --role owner|member [--password-stdin]',
    'a dashboard user; the password is read from standard input, or a one-time set-password link (24 hours) is printed',
  ],
  ['user remove', '--org ID --email E', 'offboard a dashboard user: their account, every session and API token they hold and their seat end now'],
  ['user disable|enable', '--org ID --email E', 'disable a dashboard user (every session and API token ends, sign-in refused) or enable them again'],
  ['user sessions', '--org ID --email E', "a user's open dashboard sessions: when and where each was opened and last used"],
  [
    'token create',
    '--org ID --email E --name N --scopes S',
    `an API token acting as that user; S: comma-separated ${TOKEN_SCOPES.join(', ')}; prints the token (only here)`,
  ],
  ['token list', '--org ID --email E', "a user's API tokens, never the token itself"],
  ['token revoke', '--org ID --email E --token ID', 'revoke an API token now'],
] as const;

/** The row of ADMIN_COMMANDS that `words` name (`member add` matches `member add|remove`). */
export function commandRows(words: string[]) {
  return ADMIN_COMMANDS.filter(([command]) => words.every((w, i) => command.split(' ')[i]?.split('|').includes(w)));
}

export function adminHelp(filter: string[] = []): string {
  const chosen = commandRows(filter);
  if (chosen.length === 0) throw new UsageError(`unknown admin command: ${filter.join(' ')}`);
  const lines = chosen.map(([words, options, about]) => `  ${`${words} ${options}`.trim()}\n      ${about}`);
  return `lookout admin <command> [options]   each prints one JSON document on stdout\n\n${lines.join('\n')}\n`;
}

/** The commands named by one word. */
export const ONE_WORD = new Set(['recount', 'backup', 'restore']);
