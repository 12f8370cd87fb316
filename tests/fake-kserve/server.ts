// A local KServe v2 (Open Inference Protocol) HTTP server for tests: it serves ONNX files with
// onnxruntime-node, the way Triton's ONNX backend would, on 127.0.0.1 and an ephemeral port.
// It implements model metadata, readiness and JSON inference, and records requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSession, decodeModel, ort } from '../../src/learn/onnx.ts';

const DATATYPES: Record<number, { kserve: string; ort: 'float32' | 'int64' }> = { 1: { kserve: 'FP32', ort: 'float32' }, 7: { kserve: 'INT64', ort: 'int64' } };

interface Served {
  session: ort.InferenceSession;
  inputs: { name: string; datatype: string; shape: number[] }[];
  outputs: { name: string; datatype: string; shape: number[] }[];
}

export interface FakeKServe {
  url: string;
  /** Requests received, "METHOD path". */
  requests: string[];
  /** Make every inference fail with this HTTP status (0: serve normally). */
  failWith(status: number): void;
  close(): Promise<void>;
}

function tensorsOf(list: { name?: string | null; type?: { tensorType?: { elemType?: number | null; shape?: { dim?: { dimValue?: unknown; dimParam?: string | null }[] | null } | null } | null } | null }[]) {
  return list.map((v) => ({
    name: v.name ?? '',
    datatype: DATATYPES[v.type?.tensorType?.elemType ?? 0]?.kserve ?? 'UNKNOWN',
    shape: (v.type?.tensorType?.shape?.dim ?? []).map((d) => (d.dimParam ? -1 : Number(d.dimValue ?? -1))),
  }));
}

export async function startFakeKServe(models: Record<string, Uint8Array>): Promise<FakeKServe> {
  const served = new Map<string, Served>();
  for (const [name, bytes] of Object.entries(models)) {
    const graph = decodeModel(bytes).graph!;
    served.set(name, { session: (await createSession(bytes)).session, inputs: tensorsOf(graph.input ?? []), outputs: tensorsOf(graph.output ?? []) });
  }
  const requests: string[] = [];
  let failure = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      void handle(req.method ?? 'GET', req.url ?? '/', Buffer.concat(chunks).toString('utf8')).then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
  });

  async function handle(method: string, url: string, text: string): Promise<[number, unknown]> {
    const m = /^\/v2\/models\/([^/]+)(?:\/versions\/[^/]+)?(\/ready|\/infer)?$/.exec(url);
    const model = m ? served.get(decodeURIComponent(m[1]!)) : undefined;
    if (!m || !model) return [404, { error: `model not found: ${url}` }];
    const name = decodeURIComponent(m[1]!);
    if (method === 'GET' && m[2] === '/ready') return [200, {}];
    if (method === 'GET' && !m[2]) return [200, { name, versions: ['1'], platform: 'onnxruntime_onnx', inputs: model.inputs, outputs: model.outputs }];
    if (method !== 'POST' || m[2] !== '/infer') return [405, { error: 'method not allowed' }];
    if (failure) return [failure, { error: 'injected failure' }];
    try {
      const request = JSON.parse(text) as { inputs: { name: string; shape: number[]; datatype: string; data: number[] }[]; outputs?: { name: string }[] };
      const feeds: Record<string, ort.Tensor> = {};
      for (const input of request.inputs) {
        const spec = model.inputs.find((i) => i.name === input.name);
        if (!spec) return [400, { error: `unexpected input "${input.name}"` }];
        if (spec.datatype !== input.datatype) return [400, { error: `input "${input.name}": datatype ${input.datatype}, model expects ${spec.datatype}` }];
        feeds[input.name] =
          input.datatype === 'INT64'
            ? new ort.Tensor('int64', BigInt64Array.from(input.data, (v) => BigInt(v)), input.shape)
            : new ort.Tensor('float32', Float32Array.from(input.data), input.shape);
      }
      const wanted = request.outputs?.map((o) => o.name) ?? model.outputs.map((o) => o.name);
      const out = await model.session.run(feeds, wanted);
      return [
        200,
        {
          model_name: name,
          model_version: '1',
          outputs: wanted.map((o) => ({ name: o, shape: out[o]!.dims, datatype: 'FP32', data: Array.from(out[o]!.data as Float32Array) })),
        },
      ];
    } catch (err) {
      return [400, { error: (err as Error).message }];
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failWith(status) {
      failure = status;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const m of served.values()) await m.session.release();
    },
  };
}
