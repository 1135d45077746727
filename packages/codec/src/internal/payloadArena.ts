/**
 * Where encoded payloads live once the encoder's scratch buffer is reused.
 *
 * A payload of its own (`slice`) costs an ArrayBuffer: a native allocation,
 * external-memory accounting and a finalizer for the garbage collector,
 * about 1 µs for a few hundred bytes on Node 20, more than encoding the
 * event. Small payloads are therefore copied into a shared chunk and handed
 * out as views of it (a view is an ordinary heap object). The price: a
 * view kept alive keeps its whole chunk alive, so chunks are small and
 * payloads larger than a fraction of one still get their own buffer.
 */

/** Bytes per shared chunk. */
const chunkBytes = 64 * 1024;
/** Payloads larger than this get their own buffer: a chunk holds at least 16. */
const sharedBytesMax = chunkBytes / 16;

let chunk = new Uint8Array(chunkBytes);
let used = 0;

/**
 * A copy of `bytes[0..length)` that stays valid (and unchanged) after
 * `bytes` is overwritten: a view into a shared chunk, or its own buffer.
 */
export const keep = (bytes: Uint8Array, length: number): Uint8Array => {
  if (length > sharedBytesMax) return bytes.slice(0, length);
  if (used + length > chunkBytes) {
    // The old chunk lives on as long as views of it do.
    chunk = new Uint8Array(chunkBytes);
    used = 0;
  }
  const start = used;
  chunk.set(bytes.subarray(0, length), start);
  used += length;
  return chunk.subarray(start, used);
};
