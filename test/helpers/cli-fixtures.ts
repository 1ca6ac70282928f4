/**
 * Fixtures of the CLI tests (posture, systems, gates, derive, config, serve, admin, completion,
 * help): talking to a test server directly (to compare `--json` with the service's
 * body and to seed evidence without going through the command under test), and a small XML
 * well-formedness check for the JUnit report.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'govctl-cli-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A service to call directly: base URL, key and workspace. */
export interface Direct {
  url: string;
  apiKey: string;
  workspaceId: string;
}

/** GETs or POSTs a workspace endpoint and returns status and parsed body. */
export async function callService(service: Direct, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${service.url}/api/workspaces/${service.workspaceId}/governance/${path}`, {
    method,
    headers: { authorization: `Bearer ${service.apiKey}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** Stores one evidence record through the service (not through the CLI). */
export async function postRecord(service: Direct, recordType: string, systemName: string, payload: Record<string, unknown>): Promise<void> {
  const { status, body } = await callService(service, 'POST', 'grc/evidence', {
    record_type: recordType,
    system_name: systemName,
    occurred_at: new Date().toISOString(),
    payload,
  });
  if (status >= 300) throw new Error(`seeding ${recordType} failed: ${status} ${JSON.stringify(body)}`);
}

/** A valid ai_risk_assessment payload (docs/service.md "Record payloads"). */
export const RISK_ASSESSMENT = {
  risk_level: 'limited',
  risk_summary: 'Scores consumer loan applications',
  intended_purpose: 'Assist underwriters',
  impact_domains: ['credit'],
  art5_self_assessment: true,
};

/** A valid change_event payload (docs/service.md "Record payloads"). */
export function changeEvent(system: string): Record<string, unknown> {
  return { type: 'deployment', by: 'ci@example.com', description: 'v2.3', environment: 'production', system };
}

/** One element of a parsed XML document. */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function decodeEntities(text: string, where: string): string {
  return text.replace(/&([^;\s&<]*);?/g, (match, name: string) => {
    if (!match.endsWith(';')) throw new Error(`${where}: a bare & (not an entity reference)`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (name in named) return named[name];
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(name);
    if (!numeric) throw new Error(`${where}: unknown entity &${name};`);
    const code = numeric[1].startsWith('x') ? parseInt(numeric[1].slice(1), 16) : parseInt(numeric[1], 10);
    return String.fromCodePoint(code);
  });
}

/**
 * A small XML 1.0 well-formedness check and parser (enough for JUnit reports): one root element,
 * properly nested and closed tags, quoted and unique attributes, no `<` in attribute values, only
 * defined entity references, no characters XML forbids. Throws on the first problem.
 */
export function parseXml(text: string): XmlElement {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) throw new Error('a character XML 1.0 forbids');
  let rest = text.replace(/^\uFEFF/, '');
  const decl = /^<\?xml\s+version="1\.[0-9]"(\s+encoding="[A-Za-z0-9._-]+")?(\s+standalone="(yes|no)")?\s*\?>/.exec(rest);
  if (decl) rest = rest.slice(decl[0].length);
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const name = '[A-Za-z_:][A-Za-z0-9_:.-]*';
  const tag = new RegExp(`^<(/?)(${name})((?:\\s+${name}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>`);
  const attribute = new RegExp(`(${name})\\s*=\\s*(?:"([^"<]*)"|'([^'<]*)')`, 'g');
  while (rest.length > 0) {
    const lt = rest.indexOf('<');
    const textPart = lt === -1 ? rest : rest.slice(0, lt);
    if (textPart !== '') {
      if (stack.length === 0) {
        if (textPart.trim() !== '') throw new Error(`text outside the root element: ${JSON.stringify(textPart.slice(0, 40))}`);
      } else {
        if (textPart.includes('>') && textPart.includes(']]>')) throw new Error(']]> in text');
        stack[stack.length - 1].text += decodeEntities(textPart, 'text');
      }
    }
    if (lt === -1) break;
    rest = rest.slice(lt);
    if (rest.startsWith('<!--')) {
      const end = rest.indexOf('-->');
      if (end === -1) throw new Error('an unclosed comment');
      rest = rest.slice(end + 3);
      continue;
    }
    const match = tag.exec(rest);
    if (!match) throw new Error(`a malformed tag at ${JSON.stringify(rest.slice(0, 60))}`);
    rest = rest.slice(match[0].length);
    const [, closing, tagName, attributeText, selfClosing] = match as unknown as [string, string, string, string, string];
    if (closing) {
      if (attributeText.trim() !== '' || selfClosing) throw new Error(`a malformed closing tag </${tagName}>`);
      const open = stack.pop();
      if (!open || open.name !== tagName) throw new Error(`</${tagName}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    if (root && stack.length === 0) throw new Error('a second root element');
    const element: XmlElement = { name: tagName, attributes: {}, children: [], text: '' };
    for (const found of attributeText.matchAll(attribute)) {
      const key = found[1];
      if (key in element.attributes) throw new Error(`attribute ${key} repeated on <${tagName}>`);
      element.attributes[key] = decodeEntities(found[2] ?? found[3] ?? '', `attribute ${key}`);
    }
    if (stack.length > 0) stack[stack.length - 1].children.push(element);
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1].name}> is not closed`);
  if (!root) throw new Error('no root element');
  return root;
}

/** Every element named `name` under `element` (itself included), depth first. */
export function findAll(element: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = element.name === name ? [element] : [];
  for (const child of element.children) out.push(...findAll(child, name));
  return out;
}
