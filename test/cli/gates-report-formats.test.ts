/**
 * The pure parts of `govctl gates check`: the verdict and `--fail-on`, failing closed on malformed
 * replies, the JUnit XML (escaping, well-formedness) and the GitHub workflow commands (order,
 * escaping, summary).
 */
import { describe, expect, it } from 'vitest';
import { NetworkError } from '../../src/client/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { escapeData, escapeProperty, githubAnnotations, githubSummary } from '../../src/cli/gates/github.js';
import { junitReport, xmlEscape } from '../../src/cli/gates/junit.js';
import { applyFailOn, checkGatesReply, gatesVerdict } from '../../src/cli/gate-verdict.js';
import { findAll, parseXml } from '../helpers/cli-fixtures.js';

const pass = { gate_id: 'gate_nist_airf', name: 'NIST AI RMF readiness ≥ 70%', passing: true, blocking: false, exit_code: 0 };
const soft = { gate_id: 'gate_iso_42001', name: 'ISO/IEC 42001 readiness ≥ 70%', passing: false, blocking: false, exit_code: 1, reason: '15% < 70%: record x' };
const hard = { gate_id: 'gate_eu_ai_act', name: 'EU AI Act readiness ≥ 80%', passing: false, blocking: true, exit_code: 2, reason: '20% < 80%: record y' };

describe('gates verdict', () => {
  it('is the highest exit code among the gates', () => {
    expect(gatesVerdict(checkGatesReply({ gates: [pass] }))).toBe(0);
    expect(gatesVerdict(checkGatesReply({ gates: [pass, soft] }))).toBe(1);
    expect(gatesVerdict(checkGatesReply({ gates: [soft, hard, pass] }))).toBe(2);
  });

  it('lowers the verdict by --fail-on: hard lets soft failures pass, never always passes', () => {
    expect([0, 1, 2].map((v) => applyFailOn(v as 0 | 1 | 2, 'soft'))).toEqual([0, 1, 2]);
    expect([0, 1, 2].map((v) => applyFailOn(v as 0 | 1 | 2, 'hard'))).toEqual([0, 0, 2]);
    expect([0, 1, 2].map((v) => applyFailOn(v as 0 | 1 | 2, 'never'))).toEqual([0, 0, 0]);
  });

  it.each([
    ['not an object', 'nope'],
    ['no gates array', { gate: [] }],
    ['gates not an array', { gates: 'all good' }],
    ['an empty gate list', { gates: [] }],
    ['a gate without exit_code', { gates: [{ ...pass, exit_code: undefined }] }],
    ['exit_code 3', { gates: [{ ...hard, exit_code: 3 }] }],
    ['exit_code as a string', { gates: [{ ...pass, exit_code: '0' }] }],
    ['passing as a string', { gates: [{ ...pass, passing: 'true' }] }],
    ['passing but exit_code 2', { gates: [{ ...pass, exit_code: 2 }] }],
    ['failing but exit_code 0', { gates: [{ ...hard, exit_code: 0 }] }],
    ['a failing blocking gate with exit_code 1', { gates: [{ ...hard, exit_code: 1 }] }],
    ['a gate without a name', { gates: [{ ...pass, name: '' }] }],
  ])('fails closed (69) on a reply with %s', (_why, body) => {
    let thrown: unknown;
    try {
      checkGatesReply(body);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NetworkError);
    expect(exitCodeFor(thrown)).toBe(69);
  });
});

describe('JUnit report', () => {
  const tricky = {
    ...hard,
    name: 'EU <AI> Act & "friends" \'quoted\'',
    reason: 'line one\nline two\twith <tags> & ]]> and a control \u0001 char',
  };

  it('is well-formed XML with one suite, one testcase per gate and a typed failure on each failing one', () => {
    const xml = junitReport(checkGatesReply({ gates: [pass, soft, tricky] }), { now: new Date('2025-06-01T12:00:00Z'), seconds: 0.25 });
    const root = parseXml(xml);
    const suites = findAll(root, 'testsuite');
    expect(suites).toHaveLength(1);
    expect(suites[0].attributes).toMatchObject({ name: 'govctl gates', tests: '3', failures: '2' });
    const cases = findAll(root, 'testcase');
    expect(cases.map((c) => c.attributes.name)).toEqual([pass.name, soft.name, tricky.name]);
    expect(findAll(cases[0], 'failure')).toHaveLength(0);
    const [softFailure] = findAll(cases[1], 'failure');
    expect(softFailure.attributes).toEqual({ message: soft.reason, type: 'soft' });
    const [hardFailure] = findAll(cases[2], 'failure');
    expect(hardFailure.attributes.type).toBe('hard');
    // Line breaks survive in the attribute; the forbidden control character is replaced.
    expect(hardFailure.attributes.message).toBe('line one\nline two\twith <tags> & ]]> and a control \ufffd char');
    expect(hardFailure.text).toContain('with <tags> & ]]>');
  });

  it('is checked by a parser that does reject malformed XML', () => {
    for (const bad of ['<a><b></a></b>', '<a x="1" x="2"/>', '<a>&nope;</a>', '<a>1 & 2</a>', '<a x="<"/>', '<a/><b/>', '<a>', 'text<a/>']) {
      expect(() => parseXml(bad), bad).toThrow();
    }
    expect(parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<a x="&lt;&#10;"><b/>t&amp;t</a>\n')).toMatchObject({
      name: 'a',
      attributes: { x: '<\n' },
      text: 't&t',
    });
  });

  it('escapes the five XML specials and keeps other text', () => {
    expect(xmlEscape(`a&b<c>d"e'f ≥ 80%`)).toBe('a&amp;b&lt;c&gt;d&quot;e&apos;f ≥ 80%');
    expect(xmlEscape('\ud800')).toBe('\ufffd');
  });
});

describe('GitHub workflow commands', () => {
  it('lists blocking failures first, then soft failures, then passing gates', () => {
    const lines = githubAnnotations(checkGatesReply({ gates: [pass, soft, hard] }))
      .trimEnd()
      .split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['::error', '::warning', '::notice']);
    expect(lines[0]).toContain('gate_eu_ai_act');
    expect(lines[1]).toContain('gate_iso_42001');
  });

  it('escapes %, CR and LF in messages, and : and , in properties too', () => {
    expect(escapeData('100% done\r\nnext')).toBe('100%25 done%0D%0Anext');
    expect(escapeProperty('a: b, c%')).toBe('a%3A b%2C c%25');
    const line = githubAnnotations(checkGatesReply({ gates: [{ ...hard, name: 'Gate: one, two', reason: 'a\nb 50%' }] })).trimEnd();
    expect(line).toBe('::error title=Gate%3A one%2C two (gate_eu_ai_act)::blocking gate failing: a%0Ab 50%25');
    expect(line.split('\n')).toHaveLength(1);
  });

  it('writes a Markdown summary table with pipes escaped', () => {
    const summary = githubSummary(checkGatesReply({ gates: [pass, { ...soft, reason: 'a | b\nc' }] }), 1, 'soft');
    expect(summary).toContain('| gate | id | result | reason |');
    expect(summary).toContain('| ISO/IEC 42001 readiness ≥ 70% | `gate_iso_42001` | ⚠️ soft fail | a \\| b<br>c |');
    expect(summary).toContain('exit code 1');
  });
});
