import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command-line tool of the repository: `npm run <name>`, and the usage its `--help` prints. */
export interface CliTool {
  name: string;
  usage: string;
}

/**
 * Parses a tool's command line with node's `util.parseArgs` (strict), the same way in every tool:
 * `--help` or `-h` prints the usage and exits 0; an unknown option, an option without its value or
 * an unexpected argument prints one line and exits 2.
 */
export function parseCommandLine<const T extends ParseArgsConfig>(tool: CliTool, config: T): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  const end = args.indexOf('--');
  const flags = end === -1 ? args : args.slice(0, end);
  if (flags.includes('--help') || flags.includes('-h')) {
    console.log(tool.usage);
    process.exit(0);
  }
  try {
    return parseArgs({ ...config, args, strict: true }) as ReturnType<typeof parseArgs<T>>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS_')) throw error;
    // Node's message, without the advice about `--` that follows its first sentence.
    return usageError(tool, (error as Error).message.split('. ')[0]!);
  }
}

/** One line on stderr, pointing at `--help`, and exit status 2 (a command line that cannot work). */
export function usageError(tool: CliTool, message: string): never {
  return fail(`${message.replace(/\.$/, '')} (npm run ${tool.name} -- --help shows the usage).`);
}

/** One line on stderr and exit status 2. */
export function fail(message: string): never {
  console.error(message);
  process.exit(2);
}
