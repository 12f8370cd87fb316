// A local OpenAI-compatible model server for tests (node:http on 127.0.0.1, port 0).
//
//   const server = await startOpenAIServer(handler?, { models? });
//   server.url          // 'http://127.0.0.1:PORT/v1', the base URL for the `openai` SDK
//   server.requests     // every request, in arrival order (see RecordedRequest)
//   server.inFlight     // chat completions being answered right now
//   server.maxInFlight  // the most that were ever answered at once
//   await server.close()
//
// Routes: `POST /v1/chat/completions` (non-streaming) and `GET /v1/models`. The handler gets the
// request body and answers with a Reply:
//   'text'                       n identical choices of that text (honours `n`)
//   ['a', 'b']  or {texts: [..]} exactly these choices (one text = a server that ignores `n`)
//   {json: value}                one choice whose content is JSON.stringify(value) (JSON mode)
//   {status: 404, message?, body?, headers?}  an HTTP error: an OpenAI-style error body with
//                                that message, or `body` as JSON when given
//   {malformed: 'raw'}           status 200, content-type JSON, body 'raw' as is
//   {hang: true}                 never answers; holds the request until the client goes away
// `texts` and `json` replies may add `model` (reported instead of the requested one) and `headers`.
// A handler may be async and wait (`info.closed` aborts when the client closes the connection).
// Without a handler the server answers `[model] re: <last user message>`, numbered when n > 1,
// so tests can tell calls and candidates apart. Helpers: `server.chatRequests()` (chat completion
// requests only), `lastUserText(body)`, `messageText(content)`, and each recorded request's `outcome` promise.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequestBody {
  model?: string;
  /** Content is a string, or an array of parts ({type: 'text', text}) as the API allows. */
  messages: { role: string; content: string | { type: string; text?: string }[] | null }[];
  n?: number;
  temperature?: number;
  max_tokens?: number;
  response_format?: { type: string };
  [key: string]: unknown;
}

export type Reply =
  | string
  | string[]
  | ({ texts: string[] } & ReplyExtras)
  | ({ json: unknown } & ReplyExtras)
  | { status: number; message?: string; body?: unknown; headers?: Record<string, string> }
  | { malformed: string; headers?: Record<string, string> }
  | { hang: true };

interface ReplyExtras {
  model?: string;
  headers?: Record<string, string>;
}

export interface HandlerInfo {
  /** 0-based index of this chat completion among all the server received. */
  index: number;
  headers: IncomingHttpHeaders;
  /** Aborts when the client closes the connection before the answer was sent. */
  closed: AbortSignal;
}

export type Handler = (body: ChatRequestBody, info: HandlerInfo) => Reply | Promise<Reply>;

export interface RecordedRequest {
  method: string;
  /** Path without the query, e.g. '/v1/chat/completions'. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined for GET or a body that is not JSON). */
  body: ChatRequestBody | undefined;
  /** 'answered' once the response was sent; 'closed' if the client went away first. */
  outcome: Promise<'answered' | 'closed'>;
}

export interface OpenAIServerOptions {
  /** Ids listed by GET /v1/models, in order. */
  models?: string[];
}

export interface OpenAIServer {
  url: string;
  requests: RecordedRequest[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Chat completion requests received so far. */
  chatRequests(): RecordedRequest[];
  close(): Promise<void>;
}

export function messageText(content: ChatRequestBody['messages'][number]['content']): string {
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return content ?? '';
}

export function lastUserText(body: ChatRequestBody): string {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  return messageText(last?.content ?? null);
}

const defaultHandler: Handler = (body) => {
  const n = body.n ?? 1;
  const text = `[${body.model ?? 'default'}] re: ${lastUserText(body)}`;
  return n > 1 ? Array.from({ length: n }, (_, i) => `${text} #${i + 1}`) : text;
};

export async function startOpenAIServer(handler: Handler = defaultHandler, options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const models = options.models ?? ['mascot-test-model'];
  const requests: RecordedRequest[] = [];
  let chatIndex = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ChatRequestBody | undefined;
      try {
        body = raw ? (JSON.parse(raw) as ChatRequestBody) : undefined;
      } catch {
        body = undefined;
      }
      const closed = new AbortController();
      let settle!: (o: 'answered' | 'closed') => void;
      const outcome = new Promise<'answered' | 'closed'>((r) => (settle = r));
      res.on('close', () => {
        if (res.writableFinished) settle('answered');
        else {
          settle('closed');
          closed.abort(new Error('client closed the connection'));
        }
      });
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, outcome });

      if (req.method === 'GET' && path === '/v1/models') {
        return send(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'mascot-test' })) });
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') return sendError(res, 404, `no route ${req.method} ${path}`);
      if (!body || !Array.isArray(body.messages)) return sendError(res, 400, 'body must be JSON with a messages array');

      const index = chatIndex++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => inFlight--);
      Promise.resolve()
        .then(() => handler(body, { index, headers: req.headers, closed: closed.signal }))
        .then((reply) => answer(res, body, reply))
        .catch((err: unknown) => sendError(res, 500, `test handler failed: ${(err as Error).message}`));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    chatRequests: () => requests.filter((r) => r.path === '/v1/chat/completions'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, body: ChatRequestBody, reply: Reply): void {
  if (res.destroyed) return; // the client went away while the handler waited
  if (typeof reply === 'string') return sendChoices(res, body, Array.from({ length: body.n ?? 1 }, () => reply), {});
  if (Array.isArray(reply)) return sendChoices(res, body, reply, {});
  if ('hang' in reply) return;
  if ('status' in reply) {
    if (reply.body !== undefined) return send(res, reply.status, reply.body, reply.headers);
    return sendError(res, reply.status, reply.message ?? `status ${reply.status}`, reply.headers);
  }
  if ('malformed' in reply) {
    res.writeHead(200, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.malformed);
    return;
  }
  if ('json' in reply) return sendChoices(res, body, [JSON.stringify(reply.json)], reply);
  return sendChoices(res, body, reply.texts, reply);
}

function sendChoices(res: ServerResponse, body: ChatRequestBody, texts: string[], extras: ReplyExtras): void {
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  const promptTokens = body.messages.reduce((sum, m) => sum + words(messageText(m.content)), 0);
  const completionTokens = texts.reduce((sum, t) => sum + words(t), 0);
  send(
    res,
    200,
    {
      id: `chatcmpl-test-${Math.random().toString(36).slice(2, 10)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: extras.model ?? body.model ?? 'mascot-test-model',
      choices: texts.map((content, index) => ({ index, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null })),
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    },
    extras.headers,
  );
}

function sendError(res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  send(res, status, { error: { message, type, code: status, param: null } }, headers);
}

function send(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}
