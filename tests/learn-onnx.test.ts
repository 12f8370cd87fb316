import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession, decodeModel, encodeModel, initializer, node, ort, readInitializer, readMetadata, resetCudaProbe, saveModel, valueInfo } from '../src/learn/onnx.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-onnx-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** y = relu(x W^T + b), a one-layer model built with the helpers. */
function tinyModel(): Uint8Array {
  return encodeModel({
    graphName: 'tiny',
    nodes: [node('Gemm', ['x', 'W', 'b'], ['z'], { transB: 1 }), node('Relu', ['z'], ['y'])],
    initializers: [initializer('W', [2, 3], [1, 0, -1, 0.5, 0.5, 0.5]), initializer('b', [2], [0, -1])],
    inputs: [valueInfo('x', 'float', ['batch', 3])],
    outputs: [valueInfo('y', 'float', ['batch', 2])],
    metadata: { 'mascot.kind': 'test', pack: 'support' },
  });
}

describe('ONNX helpers', () => {
  it('writes a model onnxruntime runs, with metadata and initializers readable back', async () => {
    const file = path.join(dir, 'tiny.onnx');
    saveModel(file, tinyModel());
    const bytes = fs.readFileSync(file);
    expect(readMetadata(bytes)).toEqual({ 'mascot.kind': 'test', pack: 'support' });
    const model = decodeModel(bytes);
    expect(Number(model.irVersion)).toBe(8);
    expect(Number(model.opsetImport[0]!.version)).toBe(17);
    expect(Array.from(readInitializer(model, 'W').data)).toEqual([1, 0, -1, 0.5, 0.5, 0.5]);

    const { session, provider } = await createSession(file);
    expect(provider).toBe('cpu');
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([1, 2, 3, -1, -1, -1]), [2, 3]) });
    // Row 1: [1-3, 0.5*6-1] = [-2 -> 0, 2]; row 2: [0, -1.5-1 -> 0].
    expect(Array.from(out.y!.data as Float32Array)).toEqual([0, 2, 0, 0]);
  });

  it('writes int64 initializers and float attributes', async () => {
    const bytes = encodeModel({
      graphName: 'gather',
      nodes: [node('Gather', ['T', 'i'], ['g'], { axis: 0 }), node('LeakyRelu', ['g'], ['y'], { alpha: { float: 0.5 } })],
      initializers: [initializer('T', [3], [1, -2, 3])],
      inputs: [valueInfo('i', 'int64', [2])],
      outputs: [valueInfo('y', 'float', [2])],
      metadata: {},
    });
    const { session } = await createSession(bytes);
    const out = await session.run({ i: new ort.Tensor('int64', BigInt64Array.from([1n, 2n]), [2]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([-1, 3]);
    expect(Array.from(readInitializer(decodeModel(encodeModel({ graphName: 'c', nodes: [], initializers: [initializer('s', [2], [4, 5], 'int64')], inputs: [], outputs: [], metadata: {} })), 's').data)).toEqual([4, 5]);
  });

  it('names the problem for wrong shapes, float ints and non-ONNX bytes', () => {
    expect(() => initializer('W', [2, 2], [1, 2, 3])).toThrow(/"W": 3 values for shape \[2, 2\]/);
    expect(() => node('LeakyRelu', ['x'], ['y'], { alpha: 0.5 })).toThrow(/pass \{ float: 0.5 \}/);
    expect(() => readMetadata(new TextEncoder().encode('hello, not a model'), 'notes.txt')).toThrow(/notes.txt: not an ONNX model/);
  });

  it('falls back to CPU with one warning when CUDA is requested but not installed', async () => {
    resetCudaProbe();
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    const a = await createSession(tinyModel(), { executionProvider: 'cuda', warn });
    const b = await createSession(tinyModel(), { executionProvider: 'cuda', warn });
    if (a.provider === 'cuda') {
      // A host with the CUDA provider installed: no fallback, no warning.
      expect(warnings).toEqual([]);
      return;
    }
    expect([a.provider, b.provider]).toEqual(['cpu', 'cpu']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/MASCOT_ONNX_EP=cuda.*serving on CPU/);
  });
});
