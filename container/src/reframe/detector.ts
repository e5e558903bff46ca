/**
 * Face detection on raw RGB frames: @vladmandic/face-api's tiny face detector
 * on TensorFlow.js with the WebAssembly backend (no native addon, no canvas:
 * frames go in as tensors). Loaded once per process, on first use, from files
 * that ship in the npm packages (see assets.ts); nothing is fetched.
 *
 * Why the tiny detector: on this machine it takes about 50-100 ms per
 * 416-pixel frame against 350-850 ms for SSD MobileNet, and the camera
 * needs a few frames per second of every clip. It misses faces smaller than
 * about 20 pixels at that size (a crowd far away), which then count as no
 * face (the clip falls back to activity reframing).
 */
import { locateFaceAssets } from "./assets.ts";

/** Longest side of the frames the detector sees; also its network input size. */
export const DETECTOR_INPUT = 416;
/** Detections below this confidence are ignored. */
const MIN_SCORE = 0.45;

/** A face box as fractions (0-1) of the frame's width and height. */
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

interface Tensor {
  dispose(): void;
}
interface Detection {
  score: number;
  box: { x: number; y: number; width: number; height: number };
}
/** The part of face-api (and the TensorFlow.js it re-exports) this module uses. */
interface FaceApi {
  tf: {
    setWasmPaths(prefix: string): void;
    setBackend(name: string): Promise<boolean>;
    ready(): Promise<void>;
    getBackend(): string;
    tensor3d(values: Uint8Array, shape: [number, number, number], dtype: "int32"): Tensor;
  };
  nets: { tinyFaceDetector: { loadFromDisk(dir: string): Promise<void> } };
  TinyFaceDetectorOptions: new (options: { inputSize: number; scoreThreshold: number }) => object;
  detectAllFaces(input: Tensor, options: object): PromiseLike<Detection[]>;
}

let loading: Promise<FaceApi> | undefined;

async function load(): Promise<FaceApi> {
  const assets = locateFaceAssets();
  const module: unknown = await import("@vladmandic/face-api/dist/face-api.node-wasm.js");
  const api = ((module as { default?: unknown }).default ?? module) as FaceApi;
  api.tf.setWasmPaths(assets.wasmDir);
  if (!(await api.tf.setBackend("wasm"))) throw new Error("the TensorFlow.js WebAssembly backend did not start");
  await api.tf.ready();
  await api.nets.tinyFaceDetector.loadFromDisk(assets.modelDir);
  return api;
}

/** Loads the model once; a failed load is retried by the next caller. */
export function faceApi(): Promise<FaceApi> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Faces in one RGB24 frame (`width * height * 3` bytes), best first. */
export async function detectFaces(rgb: Uint8Array, width: number, height: number): Promise<FaceBox[]> {
  if (rgb.length < width * height * 3) throw new Error(`frame holds ${rgb.length} bytes, ${width}x${height} RGB needs ${width * height * 3}`);
  const api = await faceApi();
  const input = api.tf.tensor3d(rgb.subarray(0, width * height * 3), [height, width, 3], "int32");
  try {
    const options = new api.TinyFaceDetectorOptions({ inputSize: DETECTOR_INPUT, scoreThreshold: MIN_SCORE });
    const found = await api.detectAllFaces(input, options);
    return found
      .map((d) => ({
        x: Math.max(0, d.box.x / width),
        y: Math.max(0, d.box.y / height),
        width: Math.min(1, d.box.width / width),
        height: Math.min(1, d.box.height / height),
        score: d.score,
      }))
      .filter((f) => f.width > 0 && f.height > 0)
      .sort((a, b) => b.score - a.score);
  } finally {
    input.dispose();
  }
}
