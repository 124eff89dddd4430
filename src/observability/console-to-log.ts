import { format } from 'node:util';

interface LevelLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * What libraries print with `console` (the Anthropic SDK warns of deprecated
 * models so, on every call, whatever logger it was given) goes through the
 * gateway's log as JSON lines at the matching level: log shippers parse every
 * line, and stderr text would be filed as errors or dropped.
 */
export function routeConsoleToLog(log: LevelLogger): void {
  const fields = { source: 'console' };
  // A warning said again word for word (the Anthropic SDK's, on every call for a deprecated model) is logged once.
  const warned = new Set<string>();
  console.debug = (...args: unknown[]) => log.debug(fields, format(...args));
  console.log = (...args: unknown[]) => log.info(fields, format(...args));
  console.info = (...args: unknown[]) => log.info(fields, format(...args));
  console.warn = (...args: unknown[]) => {
    const text = format(...args);
    if (warned.has(text)) return;
    if (warned.size < MAX_REMEMBERED_WARNINGS) warned.add(text);
    log.warn(fields, text);
  };
  console.error = (...args: unknown[]) => log.error(fields, format(...args));
}

/** Distinct warnings remembered: past this many, new ones are logged every time (memory stays bounded). */
const MAX_REMEMBERED_WARNINGS = 256;
