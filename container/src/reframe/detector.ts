/**
 * Faces and mouths in raw RGB frames: @vladmandic/face-api's tiny face
 * detector and its 68-point landmark net on TensorFlow.js with the
 * WebAssembly backend (no native addon, no canvas: frames go in as tensors).
 * Loaded once per process, on first use, from files that ship in the npm
 * packages (see assets.ts); nothing is fetched.
 *
 * The tiny detector finds faces best when they are about 25-70 pixels in its
 * input, whatever the input size, and its cost grows with the input's area
 * (about 21 ms of CPU at 224, 47 at 320, 77 at 416, 150 at 576 on this
 * machine). So a frame is looked at in three ways, each at the scale that
 * suits it:
 *
 * - `scan(false)`: the whole frame at input 224, which finds faces from about
 *   1/8 of the frame's longer side up to the whole frame;
 * - `scan(true)`: that, plus square tiles of the frame at an input size
 *   chosen so a face of 1/20 of the longer side is about 28 pixels in it;
 * - `near(box)`: a square 2.5 face-widths wide around where a face is
 *   expected, at input 160 (about 13 ms): how a face already found is
 *   followed from frame to frame. (At input 128 the detector's 4x4 grid
 *   placed boxes badly and missed a third of the faces it found at 160.)
 *
 * Frames are averaged down (2x2 at a time) before any large shrink, because
 * TensorFlow.js resizes bilinearly and a bilinear shrink by more than two
 * skips pixels (small faces would alias away).
 *
 * SSD MobileNet v1 (also in the package) finds partly covered faces somewhat
 * more surely, but costs 300 ms a frame; the tiny detector at the right scale
 * finds most of them too, and tracking carries a face across the frames it is
 * missed in.
 */
import { locateFaceAssets } from "./assets.ts";

/** Longest side of the frames the detector is given (sample.ts scales to it). */
export const FRAME_SIDE = 640;
/** Input size of the whole-frame pass. */
const COARSE_INPUT = 224;
/** Input size of a look around a known face, and how much wider than the face that look is. */
const NEAR_INPUT = 160;
const NEAR_SPAN = 2.5;
/** A second, wider look when the first finds nothing: the face at about the same size in a larger input. */
const WIDE_INPUT = 224;
const WIDE_SPAN = 3.5;
/** A face this small (fraction of the frame's longer side) is still about 28 pixels in a tile's input. */
const SMALLEST_FACE = 1 / 20;
const SMALLEST_FACE_INPUT_PX = 28;
/** Detections below these confidences are ignored (tracking asks for two sightings before a face counts). */
const SCAN_MIN_SCORE = 0.3;
const NEAR_MIN_SCORE = 0.25;
/** Two boxes overlapping more than this (intersection over union) are the same face. */
const SAME_FACE_IOU = 0.3;
const SAME_FACE_INSIDE = 0.6;
/**
 * A box taller or wider than this share of the frame is not taken for a face:
 * on textured backgrounds the detector's largest anchors fire at about 0.4
 * on shapes the size of the whole input. (A face that big leaves nothing to
 * reframe anyway.)
 */
const LARGEST_FACE = 0.75;
/** The tiles look for small faces only; bigger ones are the whole-frame pass's (tiles cut them). */
const TILE_LARGEST_FACE = 1 / 6;
/** A face found near where one was expected is the same face only if about as big. */
const SAME_SIZE = [0.6, 1.6] as const;

/** A face box as fractions (0-1) of the frame's width and height. */
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

interface Tensor {
  shape: number[];
  dispose(): void;
}
interface Detection {
  score: number;
  box: { x: number; y: number; width: number; height: number };
}
interface Point {
  x: number;
  y: number;
}
/** The part of face-api (and the TensorFlow.js it re-exports) this module uses. */
interface FaceApi {
  tf: {
    setWasmPaths(prefix: string): void;
    setBackend(name: string): Promise<boolean>;
    ready(): Promise<void>;
    tensor3d(values: Uint8Array, shape: [number, number, number], dtype: "int32"): Tensor;
    tidy<T>(fn: () => T): T;
    cast(x: Tensor, dtype: "float32"): Tensor;
    expandDims(x: Tensor, axis?: number): Tensor;
    squeeze(x: Tensor, axis?: number[]): Tensor;
    slice(x: Tensor, begin: number[], size: number[]): Tensor;
    avgPool(x: Tensor, filterSize: [number, number], strides: [number, number], pad: "valid"): Tensor;
    unstack(x: Tensor): Tensor[];
    image: { cropAndResize(image: Tensor, boxes: number[][], boxInd: number[], cropSize: [number, number]): Tensor };
  };
  nets: {
    tinyFaceDetector: { loadFromDisk(dir: string): Promise<void> };
    faceLandmark68Net: {
      loadFromDisk(dir: string): Promise<void>;
      detectLandmarks(input: Tensor[]): Promise<{ relativePositions: Point[] }[] | { relativePositions: Point[] }>;
    };
  };
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
  await api.nets.faceLandmark68Net.loadFromDisk(assets.modelDir);
  return api;
}

/** Loads the models once; a failed load is retried by the next caller. */
export function faceApi(): Promise<FaceApi> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * Whether two boxes are one face: they overlap by more than SAME_FACE_IOU, or
 * the smaller lies mostly inside the larger (the whole-frame pass and the
 * tiles box the same face at different sizes: with or without the hair).
 */
export function sameFace(a: FaceBox, b: FaceBox): boolean {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return false;
  const inter = w * h;
  const areaA = a.width * a.height;
  const areaB = b.width * b.height;
  return inter / (areaA + areaB - inter) > SAME_FACE_IOU || inter / Math.min(areaA, areaB) > SAME_FACE_INSIDE;
}

/** Keeps the surest of boxes that are the same face, best first. */
export function distinctFaces(boxes: FaceBox[]): FaceBox[] {
  const kept: FaceBox[] = [];
  for (const box of [...boxes].sort((a, b) => b.score - a.score)) if (kept.every((k) => !sameFace(k, box))) kept.push(box);
  return kept;
}

/** Input size for tiles `tile` pixels square in a frame whose longer side is `long`. */
export function tileInput(tile: number, long: number): number {
  const wanted = (SMALLEST_FACE_INPUT_PX * tile) / (SMALLEST_FACE * long);
  return Math.min(608, Math.max(COARSE_INPUT, Math.ceil(wanted / 32) * 32));
}

/** Left (or top) offsets of `count` tiles `tile` long spread evenly over `length`. */
function tileOffsets(length: number, tile: number): number[] {
  const count = Math.ceil(length / tile - 0.05);
  if (count <= 1) return [0];
  return Array.from({ length: count }, (_, i) => Math.round((i * (length - tile)) / (count - 1)));
}

/** What the tracker can ask about one frame; dispose() frees its tensors. */
export interface FrameLook {
  scan(fine: boolean): Promise<FaceBox[]>;
  /** `wide`: a look twice as wide (at input 224), for a face that moved further than expected. */
  near(expected: FaceBox, wide?: boolean): Promise<FaceBox | undefined>;
  /** How open each face's mouth is (the inner lips' gap over the face's size) and where its lips are, from the 68 landmarks. */
  mouths(faces: FaceBox[]): Promise<{ open: number; lips: FaceBox }[]>;
  dispose(): void;
}

/** Opens one RGB24 frame (`width * height * 3` bytes) for looking at. */
export async function lookAt(rgb: Uint8Array, width: number, height: number): Promise<FrameLook> {
  if (rgb.length < width * height * 3) throw new Error(`frame holds ${rgb.length} bytes, ${width}x${height} RGB needs ${width * height * 3}`);
  const api = await faceApi();
  const { tf } = api;
  const pixels = tf.tensor3d(rgb.subarray(0, width * height * 3), [height, width, 3], "int32");
  const full = tf.tidy(() => tf.expandDims(tf.cast(pixels, "float32")));
  pixels.dispose();
  // levels[k]: the frame averaged down by 2^k (made when first needed).
  const levels: Tensor[] = [full];
  const level = (k: number): Tensor => {
    while (levels.length <= k) levels.push(tf.avgPool(levels.at(-1)!, [2, 2], [2, 2], "valid"));
    return levels[k]!;
  };
  /** The finest level at which `span` frame pixels are at most twice `size`. */
  const levelFor = (span: number, size: number): number => {
    let k = 0;
    while (span / 2 ** k > 2 * size && Math.min(width, height) / 2 ** (k + 1) >= 16) k++;
    return k;
  };
  const long = Math.max(width, height);

  async function detect(image: Tensor, inputSize: number, minScore: number): Promise<Detection[]> {
    const input = tf.squeeze(image, [0]);
    try {
      return await api.detectAllFaces(input, new api.TinyFaceDetectorOptions({ inputSize, scoreThreshold: minScore }));
    } finally {
      input.dispose();
    }
  }

  /** Detections in a region of the frame (pixels of the full frame), as frame fractions. */
  async function inRegion(x: number, y: number, side: number, inputSize: number, minScore: number): Promise<FaceBox[]> {
    const k = levelFor(side, inputSize);
    const scale = 2 ** k;
    const source = level(k);
    const [, h, w] = source.shape as [number, number, number];
    const crop = tf.slice(source, [0, Math.round(y / scale), Math.round(x / scale), 0], [1, Math.min(h, Math.round(side / scale)), Math.min(w, Math.round(side / scale)), 3]);
    try {
      const found = await detect(crop, inputSize, minScore);
      return found.map((d) => ({
        x: (x + d.box.x * scale) / width,
        y: (y + d.box.y * scale) / height,
        width: (d.box.width * scale) / width,
        height: (d.box.height * scale) / height,
        score: d.score,
      }));
    } finally {
      crop.dispose();
    }
  }

  return {
    async scan(fine) {
      const k = levelFor(long, COARSE_INPUT);
      const coarse = (await detect(level(k), COARSE_INPUT, SCAN_MIN_SCORE)).map((d) => ({
        x: (d.box.x * 2 ** k) / width,
        y: (d.box.y * 2 ** k) / height,
        width: (d.box.width * 2 ** k) / width,
        height: (d.box.height * 2 ** k) / height,
        score: d.score,
      }));
      if (!fine) return clip(distinctFaces(coarse));
      const tile = Math.min(width, height);
      const input = tileInput(tile, long);
      const tiles: FaceBox[] = [];
      for (const top of tileOffsets(height, tile)) {
        for (const left of tileOffsets(width, tile)) {
          const found = await inRegion(left, top, tile, input, SCAN_MIN_SCORE);
          tiles.push(...found.filter((f) => Math.max(f.width * width, f.height * height) <= TILE_LARGEST_FACE * long));
        }
      }
      return clip(distinctFaces([...coarse, ...tiles]));
    },

    async near(expected, wide = false) {
      const cx = (expected.x + expected.width / 2) * width;
      const cy = (expected.y + expected.height / 2) * height;
      const size = Math.max(expected.width * width, expected.height * height);
      const inputSize = wide ? WIDE_INPUT : NEAR_INPUT;
      const side = Math.max(48, size * (wide ? WIDE_SPAN : NEAR_SPAN));
      const k = levelFor(side, inputSize);
      const scale = 2 ** k;
      // A square about the expected centre; where it reaches past the frame, cropAndResize fills black.
      const [, h, w] = level(k).shape as [number, number, number];
      const box = [(cy - side / 2) / scale / (h - 1), (cx - side / 2) / scale / (w - 1), (cy + side / 2) / scale / (h - 1), (cx + side / 2) / scale / (w - 1)];
      const crop = tf.image.cropAndResize(level(k), [box], [0], [inputSize, inputSize]);
      try {
        const found = await detect(crop, inputSize, NEAR_MIN_SCORE);
        const unit = side / inputSize;
        const faces = found.map((d) => ({
          x: (cx - side / 2 + d.box.x * unit) / width,
          y: (cy - side / 2 + d.box.y * unit) / height,
          width: (d.box.width * unit) / width,
          height: (d.box.height * unit) / height,
          score: d.score,
        }));
        // The face nearest the expected centre, if it is close enough to be the same one.
        let best: FaceBox | undefined;
        let bestDistance = Number.POSITIVE_INFINITY;
        for (const f of faces) {
          const d = Math.hypot((f.x + f.width / 2) * width - cx, (f.y + f.height / 2) * height - cy);
          const ratio = Math.max(f.width * width, f.height * height) / size;
          if (d < bestDistance && d <= size && ratio >= SAME_SIZE[0] && ratio <= SAME_SIZE[1]) {
            best = f;
            bestDistance = d;
          }
        }
        return best ? clip([best])[0] : undefined;
      } finally {
        crop.dispose();
      }
    },

    async mouths(faces) {
      if (faces.length === 0) return [];
      const squares = faces.map((f) => ({ cx: (f.x + f.width / 2) * width, cy: (f.y + f.height / 2) * height, side: Math.max(f.width * width, f.height * height) }));
      const crops = squares.map(({ cx, cy, side }) => {
        const k = levelFor(side, 112);
        const scale = 2 ** k;
        const [, h, w] = level(k).shape as [number, number, number];
        const box = [(cy - side / 2) / scale / (h - 1), (cx - side / 2) / scale / (w - 1), (cy + side / 2) / scale / (h - 1), (cx + side / 2) / scale / (w - 1)];
        return tf.tidy(() => tf.squeeze(tf.image.cropAndResize(level(k), [box], [0], [112, 112]), [0]));
      });
      try {
        const found = await api.nets.faceLandmark68Net.detectLandmarks(crops);
        const all = Array.isArray(found) ? found : [found];
        return all.map(({ relativePositions: p }, i) => {
          const gap = (a: number, b: number) => Math.hypot(p[a]!.x - p[b]!.x, p[a]!.y - p[b]!.y);
          // The lips: points 48-67 of the 68, placed back in the frame.
          const { cx, cy, side } = squares[i]!;
          const lips = p.slice(48, 68).map((q) => ({ x: cx - side / 2 + q.x * side, y: cy - side / 2 + q.y * side }));
          const left = Math.min(...lips.map((q) => q.x));
          const top = Math.min(...lips.map((q) => q.y));
          return {
            // Inner lips: 61-67, 62-66, 63-65 (top to bottom); the crop is the face's size, so this is relative to it.
            open: (gap(61, 67) + gap(62, 66) + gap(63, 65)) / 3,
            lips: { x: left / width, y: top / height, width: (Math.max(...lips.map((q) => q.x)) - left) / width, height: (Math.max(...lips.map((q) => q.y)) - top) / height, score: 1 },
          };
        });
      } finally {
        for (const c of crops) c.dispose();
      }
    },

    dispose() {
      for (const t of levels) t.dispose();
    },
  };
}

/** Boxes cut to the frame; those centred outside it or too large to be a face are dropped. */
function clip(boxes: FaceBox[]): FaceBox[] {
  return boxes
    .filter((b) => b.x + b.width / 2 > 0 && b.x + b.width / 2 < 1 && b.y + b.height / 2 > 0 && b.y + b.height / 2 < 1)
    .filter((b) => b.width <= LARGEST_FACE && b.height <= LARGEST_FACE)
    .map((b) => {
      const x = Math.max(0, b.x);
      const y = Math.max(0, b.y);
      return { x, y, width: Math.min(1, b.x + b.width) - x, height: Math.min(1, b.y + b.height) - y, score: b.score };
    })
    .filter((b) => b.width > 0 && b.height > 0);
}

/** Faces anywhere in one RGB24 frame, best first (the whole frame and its tiles). */
export async function detectFaces(rgb: Uint8Array, width: number, height: number): Promise<FaceBox[]> {
  const look = await lookAt(rgb, width, height);
  try {
    return await look.scan(true);
  } finally {
    look.dispose();
  }
}
