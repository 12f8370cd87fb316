// The Generator port: messages in, text out, abortable. Backends: `openai` (any
// OpenAI-compatible server) and `offline` (the built-in voice, always labelled as such).

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerationRequest {
  /** The persona speaking and the strategy it was asked to use (the offline voice reads these). */
  personaId: string;
  strategy: string;
  messages: ChatMessage[];
  model?: string;
  temperature: number;
  maxTokens: number;
  /** How many candidates to return (best-of-N); backends may return fewer. */
  n?: number;
  signal?: AbortSignal;
  /** Structured view of the conversation, for backends that do not read prompts (the offline voice). */
  context: {
    /** Key of the conversation; the offline voice never repeats a sentence within it. */
    sessionKey: string;
    humanName: string;
    lastHumanText: string;
    /** Bot turns already posted since the human spoke. */
    recentBotTexts: string[];
  };
}

export interface GenerationResult {
  /** One text per candidate, uncleaned. */
  texts: string[];
  /** True when the built-in offline voice wrote it: shown to people wherever the text appears. */
  offline: boolean;
  /** Model that answered, as the server reported it. */
  model: string;
}

export interface Generator {
  readonly name: string;
  generate(request: GenerationRequest): Promise<GenerationResult>;
}

/** Raised when a backend cannot produce a turn (unreachable, failing, timed out). */
export class GenerationError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'GenerationError';
  }
}
