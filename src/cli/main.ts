/**
 * `lookout start` runs the API and a worker process (with embedded stores
 * when REDIS_URL / MONGODB_URL are unset); `lookout api` runs the API alone;
 * `lookout worker` runs a worker; `lookout admin …` manages organisations
 * and projects. A usage error or a start-up failure the user can fix is one
 * line on stderr, never a stack trace.
 */
import { ConfigError, loadConfig, QUEUE_NAMES } from '../../config/index.ts';
import { StartError } from '../embedded/instance.ts';
import { adminHelp } from './admin-commands.ts';
import { parseOptions, UsageError } from './usage.ts';

const COMMAND_HELP: Record<string, string> = {
  start: `lookout start   (npm start)

  The API, a worker process and, when REDIS_URL / MONGODB_URL are unset, an embedded redis-server and FerretDB
  with their data in LOOKOUT_DATA_DIR (default .data). One instance per data folder. Stops on SIGTERM or SIGINT.
`,
  api: `lookout api

  The HTTP API alone, on REDIS_URL and MONGODB_URL (or the stores of the running \`lookout start\`). Stateless:
  run several behind a load balancer.
`,
  worker: `lookout worker [--queues ${QUEUE_NAMES.join(',')}] [--concurrency N]

  --queues        comma-separated queues to serve (default: all of them)
  --concurrency   jobs run at once on each queue, 1 to 1000 (default: WORKER_CONCURRENCY_<QUEUE>)
`,
  admin: adminHelp(),
};

function help(): string {
  return `usage: lookout <command> [options]

  start                                   API + worker (+ embedded stores); what npm start runs
  api                                     the HTTP API alone
  worker [--queues a,b] [--concurrency N] a worker process
  admin <command> [options]               organisations, projects, keys, people, alerts
  help [command]                          this text, or one command's options

${adminHelp()}
Settings are environment variables (README "Configuration"); exit codes: 0 done, 1 refused or failed,
2 usage error, 78 bad configuration.
`;
}

/** `help`, `help worker`, `help admin org create`: the text, or a UsageError for an unknown command. */
function helpFor(words: string[]): string {
  const [command, ...rest] = words;
  if (command === undefined) return help();
  if (command === 'admin') return adminHelp(rest);
  const text = COMMAND_HELP[command];
  if (!text || rest.length) throw new UsageError(`unknown command: ${words.join(' ')}`);
  return text;
}

const [command, ...rest] = process.argv.slice(2);

try {
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(helpFor(rest));
    process.exit(0);
  }
  if (command !== 'admin' && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(helpFor([command]));
    process.exit(0);
  }
  const config = loadConfig();
  switch (command) {
    case 'start':
      parseOptions(rest, {});
      await (await import('../start.ts')).start(config);
      break;
    case 'api':
      parseOptions(rest, {});
      await (await import('../start.ts')).startApiOnly(config);
      break;
    case 'worker':
      await (await import('../../workers/main.ts')).runWorkerCli(config, rest);
      break;
    case 'admin':
      process.exit(await (await import('./admin.ts')).runAdmin(config, rest));
      break;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
} catch (err) {
  if (err instanceof UsageError) {
    const about = command && COMMAND_HELP[command] ? ` ${command}` : '';
    process.stderr.write(`lookout: ${err.message} (lookout help${about} lists the options)\n`);
    process.exit(2);
  }
  if (err instanceof StartError) {
    process.stderr.write(`lookout: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
