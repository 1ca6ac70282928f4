/**
 * `check_gates` with subjects (docs/mcp.md): the tool answers the gates and the signed verdict,
 * envelope and verdict_id, over the embedded store; without subjects nothing is signed or logged.
 * The envelope's signature is checked by an independent DSSE reading (PAE per the DSSE protocol,
 * node:crypto's Ed25519 with the key the service publishes).
 */
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { makeHome, runCli } from '../helpers/cli.js';
import { connectMcpInProcess } from '../helpers/mcp.js';

const IMAGE = createHash('sha256').update('the image').digest('hex');

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const mcp of open.splice(0)) await mcp.close();
});

describe('check_gates with subjects', () => {
  it('returns the verdict and a DSSE envelope that verifies, failing or not', async () => {
    // the embedded store of `home`, whose verdict key `gates verdict-key` reads first
    const home = makeHome();
    const pem = (await runCli(['gates', 'verdict-key', '--format', 'pem'], { home })).stdout;
    const mcp = await connectMcpInProcess({
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      SERVICE_SYSTEM_NAME: 'loan-scorer',
    });
    open.push(mcp);
    const plain = await mcp.call('check_gates');
    expect(plain.structuredContent).not.toHaveProperty('envelope');

    const signed = await mcp.call('check_gates', { subjects: [{ name: 'ghcr.io/acme/app', sha256: IMAGE }] });
    expect(signed.isError).toBeFalsy();
    const result = signed.structuredContent as {
      verdict: number;
      verdict_id: string;
      envelope: { payloadType: string; payload: string; signatures: { sig: string }[] };
    };
    expect(result.verdict).toBe(2);
    expect(result.verdict_id).toMatch(/^vrd_/);
    const body = Buffer.from(result.envelope.payload, 'base64');
    const statement = JSON.parse(body.toString('utf8')) as { subject: unknown; predicate: { govctlVerdict: { system: string; verdict_id: string } } };
    expect(statement.subject).toEqual([{ name: 'ghcr.io/acme/app', digest: { sha256: IMAGE } }]);
    expect(statement.predicate.govctlVerdict).toMatchObject({ system: 'loan-scorer', verdict_id: result.verdict_id });

    const pae = Buffer.concat([Buffer.from(`DSSEv1 ${result.envelope.payloadType.length} ${result.envelope.payloadType} ${body.length} `), body]);
    expect(result.envelope.signatures.some((s) => cryptoVerify(null, pae, createPublicKey(pem), Buffer.from(s.sig, 'base64')))).toBe(true);
  });

  it('names a subject that is not a sha256 as a tool error', async () => {
    const mcp = await connectMcpInProcess({});
    open.push(mcp);
    const bad = await mcp.call('check_gates', { subjects: [{ name: 'app', sha256: 'abc' }] });
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toMatch(/sha256/);
  });
});
