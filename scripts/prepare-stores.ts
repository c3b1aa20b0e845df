// Makes sure redis-server is installed and the embedded FerretDB is built.
import { loadConfig } from '../config/index.ts';
import { ensureFerretBinary } from '../src/embedded/ferretdb.ts';
import { findRedisServer } from '../src/embedded/redis.ts';

const config = loadConfig();
findRedisServer(); // the test suite always runs its own redis-server
const binary = ensureFerretBinary(config.cacheDir, (line) => process.stderr.write(`lookout: ${line}\n`));
process.stderr.write(`lookout: redis-server found; FerretDB at ${binary}\n`);
