/**
 * The order test files start in: the longest first, whatever their project. Vitest's own order
 * runs the projects one after the other (all of `default`, then all of `server-postgres`), so the
 * PostgreSQL fuzz and crash files, among the longest, started last and ran alone at the end while
 * the other workers had nothing left to do. Here every file of both projects is one queue: failed
 * last time first, then by the duration vitest recorded for it (its cache), a file it has no
 * duration for first of all, then by size, as vitest does within a project.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const key = (file: TestSpecification) => `${file.project.name}:${relative(root, file.moduleId)}`;
    const known = new Map(files.map((file) => [file, cache.getFileTestResults(key(file))]));
    const size = (file: TestSpecification) => cache.getFileStats(key(file))?.size ?? 0;
    return [...files].sort((a, b) => {
      const groupOrder = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (groupOrder !== 0) return groupOrder;
      const ra = known.get(a);
      const rb = known.get(b);
      if (!ra || !rb) return !ra && rb ? -1 : ra && !rb ? 1 : size(b) - size(a);
      if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
      return rb.duration - ra.duration;
    });
  }
}
