// An LZMA decoder (the ".lzma" format: xz's `--format=lzma`, Python's `lzma.FORMAT_ALONE`), for
// the page's wasm, which web/pack-wasm.mjs ships LZMA-compressed: 20% fewer bytes than gzip -9
// finds, on every first visit. A port of the reference decoder's logic (LzmaSpec.cpp in the LZMA
// SDK); the header must give the unpacked size.

/// Unpacks a whole .lzma file.
export function unlzma(src) {
  return lzma({ bytes: src, have: src.length, done: true }).next().value;
}

/// Unpacks the .lzma file a response carries as its bytes arrive, so that unpacking overlaps
/// the download; a response that is not LZMA (a wasm starts with "\0asm") comes back as it is.
export async function unlzmaResponse(response) {
  if (!response.ok) throw new Error(`${response.url}: ${response.status}`);
  const reader = response.body.getReader();
  const input = { bytes: new Uint8Array(Number(response.headers.get('content-length')) || 1 << 20), have: 0, done: false };
  let run = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (input.have + value.length > input.bytes.length) {
      const bigger = new Uint8Array(Math.max(2 * input.bytes.length, input.have + value.length));
      bigger.set(input.bytes.subarray(0, input.have));
      input.bytes = bigger;
    }
    input.bytes.set(value, input.have);
    input.have += value.length;
    if (input.bytes[0] !== 0) (run ??= lzma(input)).next();
  }
  input.done = true;
  return input.bytes[0] === 0 ? input.bytes.subarray(0, input.have) : (run ?? lzma(input)).next().value;
}

/// The decoder over `input` ({bytes, have, done}): it pauses (yields) when fewer bytes than one
/// step can read are in, until `done`, and returns the unpacked bytes.
function* lzma(input) {
  while (input.have < 18 && !input.done) yield;
  let src = input.bytes;
  let d = src[0];
  const lc = d % 9; d = (d / 9) | 0;
  const lp = d % 5, pb = (d / 5) | 0;
  // Bytes 1-4: the dictionary size (here the whole output is the dictionary); 5-12: the size.
  const size = src[5] + src[6] * 2 ** 8 + src[7] * 2 ** 16 + src[8] * 2 ** 24;
  let at = 13;
  const out = new Uint8Array(size);

  // The range decoder, and every probability in one array (offsets below), so that `bit` stays
  // monomorphic: the first visit runs this once, mostly before V8 optimises it.
  const IS_MATCH = 0, IS_REP = 192, IS_REP_G0 = 204, IS_REP_G1 = 216, IS_REP_G2 = 228,
    IS_REP0_LONG = 240, SLOTS = 432, SPECIAL = 688, ALIGN = 803, LEN = 819, REP_LEN = 1333,
    LITERALS = 1847;
  const P = new Uint16Array(LITERALS + (0x300 << (lc + lp))).fill(1024);
  let range = 0xffffffff, code = 0;
  at++; // the first byte is always 0
  for (let i = 0; i < 4; i++) code = ((code << 8) | src[at++]) >>> 0;
  const bit = (i) => {
    const p = P[i];
    const bound = (range >>> 11) * p;
    let b = 0;
    if (code < bound) { range = bound; P[i] = p + ((2048 - p) >> 5); }
    else { range -= bound; code -= bound; P[i] = p - (p >> 5); b = 1; }
    if (range < 0x1000000) { range = (range * 256) >>> 0; code = ((code << 8) | src[at++]) >>> 0; }
    return b;
  };
  const direct = (n) => {
    let r = 0;
    while (n--) {
      range >>>= 1;
      const b = code >= range ? 1 : 0;
      if (b) code -= range;
      r = (r << 1) | b;
      if (range < 0x1000000) { range = (range * 256) >>> 0; code = ((code << 8) | src[at++]) >>> 0; }
    }
    return r >>> 0;
  };
  const tree = (base, bits) => {
    let m = 1;
    for (let i = 0; i < bits; i++) m = (m << 1) | bit(base + m);
    return m - (1 << bits);
  };
  const reverse = (base, bits) => {
    let m = 1, r = 0;
    for (let i = 0; i < bits; i++) { const b = bit(base + m); m = (m << 1) | b; r |= b << i; }
    return r;
  };
  // A length coder: choice (2), low (16 x 8), mid (16 x 8), high (256).
  const length = (base, posState) => bit(base) === 0 ? tree(base + 2 + (posState << 3), 3)
    : bit(base + 1) === 0 ? 8 + tree(base + 130 + (posState << 3), 3) : 16 + tree(base + 258, 8);

  let state = 0, rep0 = 0, rep1 = 0, rep2 = 0, rep3 = 0, pos = 0;
  const pbMask = (1 << pb) - 1, lpMask = (1 << lp) - 1;

  while (pos < size) {
    // A step reads at most a few dozen bytes.
    if (at + 64 > input.have && !input.done) {
      do yield; while (at + 64 > input.have && !input.done);
      src = input.bytes;
    }
    // Past the end: a cut or damaged file (whose size field may say gigabytes).
    if (at > input.have) throw new Error('lzma: the data ends early');
    const posState = pos & pbMask;
    if (bit(IS_MATCH + (state << 4) + posState) === 0) {
      const prev = pos > 0 ? out[pos - 1] : 0;
      const base = LITERALS + 0x300 * (((pos & lpMask) << lc) + (prev >> (8 - lc)));
      let s = 1;
      if (state >= 7) {
        let match = out[pos - rep0 - 1];
        while (s < 0x100) {
          const m = (match >> 7) & 1;
          match <<= 1;
          const b = bit(base + ((1 + m) << 8) + s);
          s = (s << 1) | b;
          if (m !== b) break;
        }
      }
      while (s < 0x100) s = (s << 1) | bit(base + s);
      out[pos++] = s - 0x100;
      state = state < 4 ? 0 : state < 10 ? state - 3 : state - 6;
      continue;
    }
    let n;
    if (bit(IS_REP + state) === 0) {
      rep3 = rep2; rep2 = rep1; rep1 = rep0;
      n = length(LEN, posState);
      state = state < 7 ? 7 : 10;
      const slot = tree(SLOTS + (Math.min(n, 3) << 6), 6);
      if (slot < 4) rep0 = slot;
      else {
        const bits = (slot >> 1) - 1;
        rep0 = (2 | (slot & 1)) << bits;
        if (slot < 14) rep0 += reverse(SPECIAL + rep0 - slot, bits);
        else rep0 += direct(bits - 4) * 16 + reverse(ALIGN, 4);
        rep0 >>>= 0;
      }
      if (rep0 === 0xffffffff) break; // the end marker
    } else {
      if (bit(IS_REP_G0 + state) === 0) {
        if (bit(IS_REP0_LONG + (state << 4) + posState) === 0) {
          state = state < 7 ? 9 : 11;
          out[pos] = out[pos - rep0 - 1];
          pos++;
          continue;
        }
      } else {
        let dist;
        if (bit(IS_REP_G1 + state) === 0) dist = rep1;
        else {
          if (bit(IS_REP_G2 + state) === 0) dist = rep2;
          else { dist = rep3; rep3 = rep2; }
          rep2 = rep1;
        }
        rep1 = rep0; rep0 = dist;
      }
      n = length(REP_LEN, posState);
      state = state < 7 ? 8 : 11;
    }
    if (rep0 >= pos) throw new Error('lzma: a match before the start');
    for (n += 2; n > 0 && pos < size; n--, pos++) out[pos] = out[pos - rep0 - 1];
  }
  return out;
}
