/**
 * `govctl gates check --format junit`: the gate results as JUnit XML, which GitLab (`artifacts:
 * reports: junit`), Jenkins, Azure DevOps and most CI dashboards show as a test report: one
 * `<testsuite name="govctl gates">` with one `<testcase>` per gate, and a `<failure>` whose `type`
 * is `hard` (blocking) or `soft` on every failing gate.
 */
import type { CheckedGate } from '../gate-verdict.js';

/**
 * Text for XML content and attribute values: the five special characters escaped, line breaks and
 * tabs as character references (so attributes keep them), and characters XML 1.0 cannot hold at
 * all (other C0 controls, lone surrogates, U+FFFE/U+FFFF) replaced by U+FFFD.
 */
export function xmlEscape(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    switch (char) {
      case '&':
        out += '&amp;';
        break;
      case '<':
        out += '&lt;';
        break;
      case '>':
        out += '&gt;';
        break;
      case '"':
        out += '&quot;';
        break;
      case "'":
        out += '&apos;';
        break;
      case '\n':
        out += '&#10;';
        break;
      case '\r':
        out += '&#13;';
        break;
      case '\t':
        out += '&#9;';
        break;
      default: {
        const forbidden = code < 0x20 || (code >= 0xd800 && code <= 0xdfff) || code === 0xfffe || code === 0xffff;
        out += forbidden ? '\ufffd' : char;
      }
    }
  }
  return out;
}

/** Options of {@link junitReport}. */
export interface JunitOptions {
  /** when the check ran (the suite's `timestamp`) */
  now: Date;
  /** seconds the check took (the suite's `time`) */
  seconds: number;
}

/** The JUnit XML document for the gates, ending in a newline. */
export function junitReport(gates: readonly CheckedGate[], options: JunitOptions): string {
  const failures = gates.filter((checked) => checked.status !== 'pass').length;
  const time = options.seconds.toFixed(3);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="govctl" tests="${gates.length}" failures="${failures}" errors="0" time="${time}">`,
    `  <testsuite name="govctl gates" tests="${gates.length}" failures="${failures}" errors="0" skipped="0" time="${time}" timestamp="${options.now.toISOString().replace(/\.\d{3}Z$/, '')}">`,
  ];
  for (const { gate, status } of gates) {
    const open = `    <testcase classname="govctl.gates" name="${xmlEscape(gate.name)}" id="${xmlEscape(gate.gate_id)}" time="0">`;
    if (status === 'pass') {
      lines.push(`${open}</testcase>`);
      continue;
    }
    const reason = gate.reason ?? (status === 'hard' ? 'blocking gate failing' : 'gate failing');
    const kind = status === 'hard' ? 'blocking gate failed (exit code 2)' : 'non-blocking gate failed (exit code 1)';
    lines.push(
      open,
      `      <failure message="${xmlEscape(reason)}" type="${status}">${xmlEscape(`${gate.name}: ${kind}\n${reason}`)}</failure>`,
      '    </testcase>',
    );
  }
  lines.push('  </testsuite>', '</testsuites>');
  return lines.join('\n') + '\n';
}
