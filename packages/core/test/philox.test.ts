import { describe, expect, it } from 'vitest';
import { philox4x32 } from '../src/philox';

// Known-answer vectors of Philox4x32-10 from the Random123 distribution (kat_vectors).
const KAT: Array<{ ctr: number[]; key: number[]; out: number[] }> = [
  { ctr: [0, 0, 0, 0], key: [0, 0], out: [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8] },
  {
    ctr: [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    key: [0xffffffff, 0xffffffff],
    out: [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
  },
  {
    ctr: [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
    key: [0xa4093822, 0x299f31d0],
    out: [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
  },
];

describe('philox4x32-10', () => {
  it.each(KAT)('matches the Random123 known answer %#', ({ ctr, key, out }) => {
    const got = new Uint32Array(4);
    philox4x32(ctr[0]!, ctr[1]!, ctr[2]!, ctr[3]!, key[0]!, key[1]!, got);
    expect(Array.from(got)).toEqual(out);
  });
});
