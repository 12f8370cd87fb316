// One way to build the official `openai` SDK client for any OpenAI-compatible endpoint, shared by
// the generator, the judges, the simulated user, the llm director and the safety model check.
import OpenAI, { type ClientOptions } from 'openai';

export interface OpenAIEndpointOptions {
  baseURL: string;
  apiKey?: string;
  timeoutMs: number;
  retries: number;
}

export function createOpenAIClient(endpoint: OpenAIEndpointOptions, extra: Pick<ClientOptions, 'fetch' | 'logLevel' | 'logger'> = {}): OpenAI {
  return new OpenAI({
    baseURL: endpoint.baseURL,
    // Local servers accept any key; the SDK insists on one, so it gets a placeholder and the header is dropped.
    apiKey: endpoint.apiKey || 'unset',
    defaultHeaders: endpoint.apiKey ? undefined : { Authorization: null },
    // Explicit nulls keep the SDK from picking up OPENAI_* variables meant for something else.
    adminAPIKey: null,
    organization: null,
    project: null,
    timeout: endpoint.timeoutMs,
    maxRetries: endpoint.retries,
    ...extra,
  });
}

/** host:port only, so no path or credential in a URL ends up in a log line or error. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || 'the configured endpoint';
  } catch {
    return 'the configured endpoint';
  }
}
