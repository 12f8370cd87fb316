// Remote inference for the learned director over the KServe v2 (Open Inference Protocol) HTTP API,
// which NVIDIA Triton serves ONNX models with. The director file stays local (its metadata defines
// the pack, features and action slots); the server runs the same file:
//
//   GET  {base}/v2/models/{model}            metadata: inputs and outputs with datatypes and shapes
//   GET  {base}/v2/models/{model}/ready      200 when it can serve
//   POST {base}/v2/models/{model}/infer      {"inputs": [{name, shape, datatype, data}], "outputs": [{name}]}
//
// At start the client checks the metadata and sends one probe through both the server and the
// local file: a server serving other weights is refused instead of silently directing differently.
import type { DirectorModelInfo } from '../learn/director-model.ts';
import { IO } from '../learn/director-model.ts';
import type { DirectorFeatures } from '../learn/features.ts';
import type { DirectorInference } from './onnx-policy.ts';
import { LocalInference } from './onnx-policy.ts';

export interface KServeOptions {
  /** Server root, e.g. http://triton:8000 (MASCOT_KSERVE_URL). */
  url: string;
  /** Model name on the server; "{pack}" is replaced by the pack id (MASCOT_KSERVE_MODEL). */
  model: string;
  /** Model version on the server, if it keeps several. */
  modelVersion?: string;
  /** Per-request timeout (MASCOT_KSERVE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Extra headers (e.g. an authorization header for a gateway in front of the server). */
  headers?: Record<string, string>;
}

export class KServeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KServeError';
  }
}

interface TensorJson {
  name: string;
  shape: number[];
  datatype: string;
  data: number[];
}

interface ModelMetadata {
  name: string;
  inputs?: { name: string; datatype: string; shape: number[] }[];
  outputs?: { name: string; datatype: string; shape: number[] }[];
}

const EXPECTED_INPUTS: Record<string, string> = { [IO.ids]: 'INT64', [IO.weights]: 'FP32', [IO.dense]: 'FP32', [IO.mask]: 'FP32' };

export class KServeInference implements DirectorInference {
  readonly where: string;
  private readonly base: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly options: KServeOptions,
    readonly info: DirectorModelInfo,
  ) {
    const model = options.model.replaceAll('{pack}', info.pack);
    this.base = `${options.url.replace(/\/+$/, '')}/v2/models/${encodeURIComponent(model)}${options.modelVersion ? `/versions/${encodeURIComponent(options.modelVersion)}` : ''}`;
    this.where = `KServe model "${model}" at ${options.url}`;
    this.timeoutMs = options.timeoutMs ?? 1000;
  }

  /** Check the server is ready, its tensors match the director graph, and it computes what the local file computes. */
  async verify(localFile: Uint8Array, probe: DirectorFeatures): Promise<void> {
    const ready = await this.request('GET', '/ready').catch((err: Error) => {
      throw new KServeError(`${this.where} is not reachable: ${err.message}`);
    });
    if (!ready.ok) throw new KServeError(`${this.where} is not ready (HTTP ${ready.status})`);
    const meta = (await (await this.request('GET', '')).json()) as ModelMetadata;
    for (const [name, datatype] of Object.entries(EXPECTED_INPUTS)) {
      const input = meta.inputs?.find((i) => i.name === name);
      if (!input) throw new KServeError(`${this.where}: the model has no input "${name}"; is it a MASCOT director?`);
      if (input.datatype !== datatype) throw new KServeError(`${this.where}: input "${name}" is ${input.datatype}, expected ${datatype}`);
    }
    const output = meta.outputs?.find((o) => o.name === IO.probabilities);
    if (!output) throw new KServeError(`${this.where}: the model has no output "${IO.probabilities}"`);
    const slots = output.shape.at(-1);
    if (slots !== undefined && slots > 0 && slots !== this.info.shape.actions)
      throw new KServeError(`${this.where}: the model has ${slots} action slots, the director file ${this.info.shape.actions}`);

    const local = await LocalInference.open(localFile, 'local copy');
    try {
      const want = await local.run(probe);
      const got = await this.run(probe);
      const diff = Math.max(...Array.from(want, (p, i) => Math.abs(p - (got[i] ?? NaN))));
      if (!(diff < 1e-4)) throw new KServeError(`${this.where} does not serve this director file (probe differs by ${diff.toExponential(2)}); load ${this.info.policyVersion} on the server`);
    } finally {
      await local.close();
    }
  }

  async run(f: DirectorFeatures): Promise<number[]> {
    const n = f.ids.length;
    const inputs: TensorJson[] = [
      { name: IO.ids, shape: [1, n], datatype: 'INT64', data: Array.from(f.ids) },
      { name: IO.weights, shape: [1, n], datatype: 'FP32', data: Array.from(f.weights) },
      { name: IO.dense, shape: [1, f.dense.length], datatype: 'FP32', data: Array.from(f.dense) },
      { name: IO.mask, shape: [1, f.mask.length], datatype: 'FP32', data: f.mask.map((m) => (m ? 1 : 0)) },
    ];
    const res = await this.request('POST', '/infer', { inputs, outputs: [{ name: IO.probabilities }] });
    const body = (await res.json().catch(() => ({}))) as { outputs?: TensorJson[]; error?: string };
    if (!res.ok) throw new KServeError(`HTTP ${res.status}${body.error ? `: ${body.error}` : ''}`);
    const out = body.outputs?.find((o) => o.name === IO.probabilities);
    if (!out || !Array.isArray(out.data)) throw new KServeError(`response has no "${IO.probabilities}" output`);
    // Servers may return the tensor flat or nested by shape (the protocol allows both).
    const data = (out.data as unknown[]).flat(Infinity) as number[];
    if (data.length !== this.info.shape.actions) throw new KServeError(`"${IO.probabilities}" has ${data.length} values, expected ${this.info.shape.actions}`);
    return data;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private request(method: 'GET' | 'POST', suffix: string, body?: unknown): Promise<Response> {
    return fetch(`${this.base}${suffix}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...this.options.headers },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }
}
