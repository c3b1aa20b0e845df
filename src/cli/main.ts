/**
 * `lookout start` runs the API and a worker process (with embedded stores
 * when REDIS_URL / MONGODB_URL are unset); `lookout api` runs the API alone;
 * `lookout worker` runs a worker;
 * `lookout admin …` manages organisations and projects.
 */
import { ConfigError, loadConfig } from '../../config/index.ts';

const [command, ...rest] = process.argv.slice(2);

function usage(): never {
  process.stderr.write(
    'usage: lookout start | lookout api | lookout worker [--queues a,b] [--concurrency N] | lookout admin <command> (lookout admin help)\n',
  );
  process.exit(2);
}

try {
  const config = loadConfig();
  switch (command) {
    case 'start':
      await (await import('../start.ts')).start(config);
      break;
    case 'api':
      await (await import('../start.ts')).startApiOnly(config);
      break;
    case 'worker':
      await (await import('../../workers/main.ts')).runWorkerCli(config, rest);
      break;
    case 'admin':
      process.exitCode = await (await import('./admin.ts')).runAdmin(config, rest);
      break;
    default:
      usage();
  }
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
