/**
 * Bounded capture of a command's output stream. A command may print gigabytes (`yes`); the
 * model needs the start (what ran) and the end (how it finished), so the middle is dropped
 * and the number of dropped bytes is stated in the text.
 */
/** Keeps the first and last bytes of a stream, counting everything that passes. */
export class OutputCapture {
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  /** Every byte the stream produced, kept or not. */
  total = 0;
  /** Bytes kept from the start. */
  readonly headMax: number;
  /** Bytes kept from the end. */
  readonly tailMax: number;

  constructor(readonly maxBytes: number) {
    this.headMax = Math.ceil(maxBytes / 2);
    this.tailMax = maxBytes - this.headMax;
  }

  /** Adds a chunk; memory stays bounded by roughly maxBytes plus one chunk. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headMax) {
      const take = Math.min(chunk.length, this.headMax - this.headLen);
      this.head.push(chunk.subarray(0, take));
      this.headLen += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    // Drop whole chunks from the front while the rest still covers the tail budget.
    while (this.tail.length > 1 && this.tailLen - this.tail[0]!.length >= this.tailMax) {
      this.tailLen -= this.tail.shift()!.length;
    }
  }

  /**
   * Counts `bytes` that passed without keeping them, for a reader that skips the middle of a
   * file: valid after the head is full and before pushing at least the tail budget.
   */
  skip(bytes: number): void {
    this.total += bytes;
  }

  /** True when some bytes were dropped. */
  get truncated(): boolean {
    return this.total > this.maxBytes;
  }

  /** The text: all of it, or head + `[... N bytes dropped ...]` + tail, cut on UTF-8 boundaries. */
  text(): string {
    const { head, tail, dropped } = this.parts();
    if (dropped === 0) return Buffer.concat([head, tail]).toString('utf8');
    return `${head.toString('utf8')}\n[... ${dropped} bytes dropped ...]\n${tail.toString('utf8')}`;
  }

  /** Bytes left out of text() (0 when nothing was dropped). */
  get droppedBytes(): number {
    return this.parts().dropped;
  }

  private parts(): { head: Buffer; tail: Buffer; dropped: number } {
    const head = Buffer.concat(this.head);
    const tailAll = Buffer.concat(this.tail);
    if (!this.truncated) return { head, tail: tailAll, dropped: 0 };
    const keptHead = head.subarray(0, wholeCharsEnd(head));
    let tail = tailAll.subarray(Math.max(0, tailAll.length - this.tailMax));
    // Skip continuation bytes (10xxxxxx) so the tail starts on a whole character.
    let skip = 0;
    while (skip < 3 && skip < tail.length && (tail[skip]! & 0xc0) === 0x80) skip++;
    tail = tail.subarray(skip);
    return { head: keptHead, tail, dropped: this.total - keptHead.length - tail.length };
  }
}

/** Length of `buf` without a trailing incomplete UTF-8 sequence. */
function wholeCharsEnd(buf: Buffer): number {
  // Find the last lead byte among the final 4 bytes and check its sequence is complete.
  for (let i = buf.length - 1; i >= 0 && i >= buf.length - 4; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= buf.length ? buf.length : i;
  }
  return buf.length;
}
