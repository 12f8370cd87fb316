// Structured logs to stderr (stdout belongs to the console companion and CLI output).
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.MASCOT_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined, redact: { paths: ['token', '*.token', 'apiKey', '*.apiKey', 'authorization', '*.authorization'], censor: '[secret]' } }, pino.destination(2));
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
