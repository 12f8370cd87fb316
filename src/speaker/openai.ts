// The `openai` generator backend: any OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
// Ollama, a hosted API) through the official SDK. Per-persona model names (LoRA adapters served
// under their own names) come with each request; a global bottleneck limit bounds the requests
// in flight; every failure becomes one GenerationError naming the endpoint and the cause.
import Bottleneck from 'bottleneck';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { Logger } from '../log.ts';
import { GenerationError, type GenerationRequest, type GenerationResult, type Generator } from './generator.ts';
import { createOpenAIClient } from './openai-client.ts';

export interface OpenAIGeneratorOptions {
  /** Base URL of the OpenAI-compatible API, usually ending in /v1. */
  baseURL: string;
  /** Sent as `Authorization: Bearer ...`; omitted entirely when unset (most local servers need none). */
  apiKey?: string;
  /** Model for requests that name none; unset asks the server's /models once and uses the first. */
  defaultModel?: string;
  /** Per attempt: each retry gets the full timeout again. */
  timeoutMs: number;
  /** Retries of connection errors, timeouts, 408/409/429 and 5xx (the SDK's exponential backoff). */
  retries: number;
  /** Requests in flight at most, across all personas and channels. */
  concurrency: number;
  log: Logger;
}

export class OpenAIGenerator implements Generator {
  readonly name = 'openai';
  private readonly client: OpenAI;
  private readonly limiter: Bottleneck;
  /** host:port of the endpoint, the only part of the address error messages show. */
  private readonly host: string;
  private discovered: Promise<string> | undefined;
  /** Whether the server returns n choices for one request; learnt from the first best-of-N call. */
  private multiChoice: 'unknown' | 'yes' | 'no' = 'unknown';

  constructor(private readonly options: OpenAIGeneratorOptions) {
    this.host = endpointHost(options.baseURL);
    const sdkLog = options.log.child({ component: 'openai-sdk' });
    this.client = createOpenAIClient(options, {
      fetch: fetchWithWrappedErrors,
      // The SDK's own lines (retries, failures) go to our log at debug; the engine logs the outcome.
      logLevel: 'debug',
      logger: {
        error: (msg: string) => sdkLog.debug(msg),
        warn: (msg: string) => sdkLog.debug(msg),
        info: (msg: string) => sdkLog.debug(msg),
        debug: () => {},
      },
    });
    this.limiter = new Bottleneck({ maxConcurrent: options.concurrency });
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const n = Math.max(1, request.n ?? 1);
    const model = request.model ?? this.options.defaultModel ?? (await abortable(this.discoverModel(), request.signal));
    const texts: string[] = [];
    const reported: string[] = [];
    if (n > 1 && this.multiChoice !== 'no') {
      const batch = await this.askForChoices(request, model, n);
      if (batch) {
        texts.push(...choiceTexts(batch).slice(0, n));
        reported.push(batch.model);
      }
    }
    // One choice per call for whatever is missing, in parallel (still under the concurrency limit).
    const singles = await Promise.all(Array.from({ length: n - texts.length }, () => this.complete(request, model, 1)));
    for (const c of singles) {
      texts.push(choiceTexts(c)[0] ?? '');
      reported.push(c.model);
    }
    this.options.log.debug({ endpoint: this.host, model: reported[0], candidates: texts.length }, 'generated');
    return { texts, offline: false, model: reported[0] || model };
  }

  /**
   * One request for n choices. Servers differ: vLLM and SGLang honour `n`, Ollama answers with one
   * choice, llama.cpp server rejects n > 1 with an error. The first such request is a probe without
   * retries; a server that answers it with fewer choices or an HTTP error is asked one choice per
   * request from then on. Undefined means: make single-choice calls instead, now.
   */
  private async askForChoices(request: GenerationRequest, model: string, n: number): Promise<ChatCompletion | undefined> {
    if (this.multiChoice === 'yes') return this.complete(request, model, n);
    let batch: ChatCompletion;
    try {
      batch = await this.complete(request, model, n, 0);
    } catch (err) {
      if (request.signal?.aborted) throw err;
      if (err instanceof GenerationError && err.cause instanceof APIError && typeof err.cause.status === 'number') {
        this.multiChoice = 'no';
        this.options.log.info({ endpoint: this.host, err: err.message }, 'model server refused n > 1; asking for one candidate per request');
      }
      return undefined;
    }
    this.multiChoice = batch.choices.length >= n ? 'yes' : 'no';
    return batch;
  }

  /** One chat completion under the concurrency limit; rejects with the abort reason on abort. */
  private async complete(request: GenerationRequest, model: string, n: number, maxRetries = this.options.retries): Promise<ChatCompletion> {
    const { signal } = request;
    const completion = await this.call(
      () =>
        this.client.chat.completions.create(
          {
            model,
            messages: request.messages,
            temperature: request.temperature,
            max_tokens: request.maxTokens,
            ...(n > 1 ? { n } : {}),
          },
          { signal, maxRetries },
        ),
      `model "${model}"`,
      signal,
    );
    // A body that is not a chat completion (a proxy's HTML page, a truncated reply) is a server fault.
    if (typeof completion !== 'object' || completion === null || !Array.isArray(completion.choices) || completion.choices.length === 0) {
      throw new GenerationError(`model server ${this.host} (model "${model}"): the response has no choices; is ${this.host} an OpenAI-compatible /v1 endpoint?`);
    }
    return completion;
  }

  /** The first model the server lists, asked once and remembered (a failure is not remembered). */
  private discoverModel(): Promise<string> {
    this.discovered ??= this.call(() => this.client.models.list(), 'listing models').then(
      (page) => {
        const id = page.data[0]?.id;
        if (!id) throw new GenerationError(`model server ${this.host} lists no models at /models: set MASCOT_LLM_MODEL or generation.model in the persona file`);
        this.options.log.info({ endpoint: this.host, model: id }, 'no model configured; using the first the server lists');
        return id;
      },
      (err: unknown) => {
        this.discovered = undefined;
        throw err;
      },
    );
    return this.discovered;
  }

  /** Run one SDK call under the concurrency limit, translating failures; the abort reason wins. */
  private async call<T>(fn: () => Promise<T>, what: string, signal?: AbortSignal): Promise<T> {
    const job = this.limiter.schedule(async () => {
      // A request aborted while it waited in the queue frees its slot at once.
      if (signal?.aborted) throw signal.reason;
      return fn();
    });
    try {
      return await abortable(job, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw this.explain(err, what);
    }
  }

  /** One clear message that names the endpoint and the cause, never the API key. */
  private explain(err: unknown, what: string): GenerationError {
    if (err instanceof GenerationError) return err;
    const at = `model server ${this.host} (${what})`;
    const tries = this.options.retries > 0 ? ` after ${this.options.retries + 1} attempts` : '';
    let message: string;
    if (err instanceof APIConnectionTimeoutError) message = `${at}: no answer within ${this.options.timeoutMs} ms${tries}`;
    else if (err instanceof APIConnectionError) message = `${at}: unreachable (${rootCause(err)})${tries}`;
    else if (err instanceof APIUserAbortError) message = `${at}: request aborted`;
    else if (err instanceof APIError) message = `${at}: HTTP ${err.status ?? '?'}${statusHint(err.status)}: ${serverMessage(err)}${err.status && err.status >= 500 ? tries : ''}`;
    else if (err instanceof SyntaxError) message = `${at}: malformed response (${err.message})`;
    else message = `${at}: ${err instanceof Error ? err.message : String(err)}`;
    return new GenerationError(this.redact(message), err);
  }

  private redact(text: string): string {
    const key = this.options.apiKey;
    return key && key.length >= 4 ? text.split(key).join('[secret]') : text;
  }
}

function endpointHost(baseURL: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseURL);
  } catch {
    url = undefined;
  }
  // "localhost:8000/v1" parses as a URL with the scheme "localhost:", so check the scheme too.
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host) {
    throw new Error(`MASCOT_LLM_BASE_URL: "${baseURL}" is not an http(s) URL (expected e.g. http://127.0.0.1:8000/v1)`);
  }
  return url.host;
}

function choiceTexts(completion: ChatCompletion): string[] {
  // A null content (a refusal, a tool call) counts as an empty candidate; the speaker drops it.
  return completion.choices.map((c) => c.message?.content ?? '');
}

/** The innermost cause of a connection error, e.g. "ECONNREFUSED" or "getaddrinfo ENOTFOUND". */
function rootCause(err: Error): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = (e as { code?: unknown }).code;
  const msg = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

function statusHint(status: number | undefined): string {
  if (status === 401 || status === 403) return ' (check MASCOT_LLM_API_KEY)';
  if (status === 404) return ' (unknown model or wrong base URL?)';
  if (status === 429) return ' (rate limited)';
  return '';
}

/** The server's own error text, without the SDK's status prefix. */
function serverMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string') return body.message;
  return err.message.replace(/^\d{3}\s*/, '') || 'no details';
}

/**
 * The SDK reads a server's error text only from `{"error": {"message": ...}}`. Some servers put it
 * elsewhere (older vLLM and SGLang: `{"object": "error", "message": ...}`; FastAPI: `{"detail": ...}`;
 * a bare JSON string), which would leave "status code (no body)": rewrap those so the text survives.
 */
async function fetchWithWrappedErrors(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, init);
  if (res.ok) return res;
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined; // not JSON: the SDK shows the text itself
  }
  let message: string | undefined;
  if (typeof body === 'string') message = body;
  else if (typeof body === 'object' && body !== null && !('error' in body)) {
    const { message: m, detail } = body as { message?: unknown; detail?: unknown };
    if (typeof m === 'string') message = m;
    else if (detail !== undefined) message = typeof detail === 'string' ? detail : JSON.stringify(detail);
  }
  const out = message === undefined ? text : JSON.stringify({ error: { message } });
  return new Response(out, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Settle with `promise`, or reject with the abort reason as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  // The abandoned promise still settles later; the handlers below keep that from going unhandled.
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
