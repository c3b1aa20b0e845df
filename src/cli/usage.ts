/**
 * Command-line usage errors: one line on stderr, exit 2, never a stack
 * trace. Node's argument parser is wrapped so its messages name the option
 * and say what to do.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `args` against `options` (string values, or boolean flags); positionals are returned in `_`. */
export function parseOptions<O extends Options>(
  args: string[],
  options: O,
): { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string } & { _: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { ...(values as { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string }), _: positionals };
  } catch (err) {
    throw new UsageError(describeParseError(err as NodeJS.ErrnoException, Object.keys(options)));
  }
}

function describeParseError(err: NodeJS.ErrnoException, known: string[]): string {
  const quoted = /'(-{1,2}[^' ]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return known.length
        ? `unknown option ${quoted ?? ''}; the options here are ${known.map((k) => `--${k}`).join(', ')}`
        : `unknown option ${quoted ?? ''}; this command takes no options`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `${quoted ?? 'an option'} needs a value (${quoted ?? '--option'} VALUE)`;
    default:
      return err.message;
  }
}
