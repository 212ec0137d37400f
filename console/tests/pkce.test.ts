import { describe, expect, it } from 'vitest';
import { base64url, challengeS256, createVerifier, VERIFIER_CHARSET } from '../src/auth/pkce';

describe('PKCE', () => {
  it('makes verifiers of unreserved characters, 43-128 long', () => {
    for (const len of [43, 64, 128]) {
      const v = createVerifier(len);
      expect(v).toHaveLength(len);
      expect(v).toMatch(/^[A-Za-z0-9\-._~]+$/);
    }
    expect(VERIFIER_CHARSET).toHaveLength(66);
    expect(createVerifier()).not.toBe(createVerifier());
    expect(() => createVerifier(42)).toThrow();
    expect(() => createVerifier(129)).toThrow();
  });

  // RFC 7636 Appendix B: the verifier is the base64url of these 32 octets, and its S256
  // challenge is E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM.
  const RFC_OCTETS = [
    116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91,
    88, 5, 88, 83, 132, 141, 121,
  ];
  const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

  it("computes RFC 7636's S256 example", async () => {
    expect(base64url(new Uint8Array(RFC_OCTETS))).toBe(RFC_VERIFIER);
    expect(await challengeS256(RFC_VERIFIER)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('hashes the often-misquoted verifier to its own (different) challenge', async () => {
    // "dBjftJeZ4CVP-mJ92K9qpvBvVzaOUw8fE4hTGSEB1L8" is not the RFC's verifier (compare the octets
    // above); SHA-256 gives it this challenge, as sha256sum and Python's hashlib agree.
    expect(await challengeS256('dBjftJeZ4CVP-mJ92K9qpvBvVzaOUw8fE4hTGSEB1L8')).toBe('vYR3nvniU4Won66kAz-T9z8noYa8WYLV663z0Jgbu-8');
  });
});
